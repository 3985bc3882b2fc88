"""The every-head view (`m`) at 80x24, read from the rendered screen: a 6-layer, 8-head model shows every
head (H0..H7) and reaches every layer (L0..L5) by the arrows, its key gives numbers: the cursor tile's scale
(0 to its max) and its entropy; each tile keeps a line per two rows of its grid, the layers below scrolling
(issue 36 item 13: 7x7 grids were one-line tiles with three lines left empty)."""

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
        seen = set()
        for _ in range(6):
            seen |= {layer for layer in range(6) if any(f"│L{layer} " in line for line in screen_lines(app))}
            await pilot.press("down")
            await pilot.pause()
        assert seen == set(range(6)), seen
        heads = next(line for line in lines if "H0 " in line and "H1 " in line)
        assert all(f"H{h}" in heads for h in range(8))
        key = next(line for line in lines if "each tile 0 to its max" in line)
        assert re.search(r"L0 H0 0\.00 +[01]\.\d\d entropy \d\.\d\d nats", key), key


async def test_tiles_are_readable_and_use_the_room_at_80x24():
    app = app_for()  # the shipped English toy: 4 layers of 4 heads over a 7-token sentence
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await wait_for(pilot, lambda: "query [" in screen_text(app), 60)
        await pilot.press("m")
        await wait_for(pilot, lambda: "each tile 0 to its max" in screen_text(app), 60)
        lines = screen_lines(app)
        top = next(y for y, line in enumerate(lines) if "│L0 " in line and "H0" not in line)  # not the key
        caption = next(y for y in range(top + 1, len(lines)) if re.search(r"\d\.\d\d +\d\.\d\d", lines[y]))
        assert caption - top >= 4, "\n".join(lines)  # 7 rows of the grid: 4 lines of half blocks
        inside = [line for line in lines if line.startswith(" │")]
        assert not any(line[2:-1].strip() == "" for line in inside[-3:]), "\n".join(lines)  # no empty rows left
