"""The every-head view (`m`) at 80x24, read from the rendered screen: a 6-layer, 8-head model shows every
layer (L0..L5) and every head (H0..H7), the tiles' captions giving way before a layer is cut off, and its
key gives numbers: the cursor tile's scale (0 to its max) and its entropy."""

from __future__ import annotations

import re

from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from textual.widgets import Input


async def test_every_layer_and_head_fits_at_80x24_and_the_key_has_numbers():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.query_one("#f-decoder_layers", Input).value = "6"
        app.query_one("#f-heads", Input).value = "8"
        await pilot.pause()
        app.view("architecture").action_apply()
        await wait_ready(pilot, 2)
        app.show_view("attention")
        await wait_for(pilot, lambda: "query [" in screen_text(app), 60)
        await pilot.press("m")
        await wait_for(pilot, lambda: "each tile 0 to its max" in screen_text(app), 60)
        lines = screen_lines(app)
        assert all(any(f"│L{layer} " in line for line in lines) for layer in range(6)), "\n".join(lines)
        heads = next(line for line in lines if "H0 " in line and "H1 " in line)
        assert all(f"H{h}" in heads for h in range(8))
        key = next(line for line in lines if "each tile 0 to its max" in line)
        assert re.search(r"L0 H0 0\.00 +[01]\.\d\d entropy \d\.\d\d nats", key), key
