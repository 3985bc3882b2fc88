"""The Attention view's sinusoidal position grid reads like the Tour's picture, from the rendered screen: the
sine columns only (one frequency each, fast left, slow right), the whole range of frequencies on one screen,
the value scale -1..1, and the axes named in the title and the read-out."""

from __future__ import annotations

import math

from app_support import app_for, screen_lines, screen_text, view_mounted, wait_for, wait_ready
from textual.widgets import Select

from tui_lab.app.views.attention.grids import POS_ROWS, sine_spec


def test_a_wide_model_shows_every_kth_frequency_up_to_the_slowest():
    spec = sine_spec(512)
    assert spec.cols[:3] == ["0", "4", "8"] and spec.cols[-1] == "252" and len(spec.cols) == 64
    assert "(every 4th)" in spec.title and spec.axes == ("position", "i")
    assert math.isclose(spec.values[5][1], math.sin(5 / 10000 ** (8 / 512)), abs_tol=1e-9)  # PE(5, 2i), i = 4


async def test_the_sinusoidal_grid_names_its_axes_and_shows_one_sine_per_column():
    app = app_for("--preset", "gpt2-toy")  # d_model 128: 64 frequencies
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "attention", 60)
        app.show_view("attention")
        await pilot.pause()
        kinds = app.query_one("#att-kind", Select)
        await wait_for(pilot, lambda: any(v == "pos-sinusoidal" for _, v in kinds._options), 60)
        kinds.value = "pos-sinusoidal"
        await wait_for(pilot, lambda: "PE(pos, 2i)" in screen_text(app))
        text = screen_text(app)
        assert f"PE(pos, 2i) = sin(pos / 10000^(2i/128)): rows position 0..{POS_ROWS - 1}, columns i" in text
        assert "position [0] '0'  ->  i [0] '0'" in text and "-1.00" in text
        # all 64 frequencies on screen at 80 columns, one character each: whole numbers written across as ticks
        # every 5 columns, each over its own column ("10" downwards read as "1" over "0")
        lines = screen_lines(app)
        ticks = next(line for line in lines if "0    5    10   15" in line)
        first = next(line for line in lines if line.lstrip(" │").startswith("0 ▀"))
        start = ticks.index("0    5")
        assert first.index("▀") == start and ticks.index(" 60 ") + 1 - start == 60
        assert first.count("▀") == 64
