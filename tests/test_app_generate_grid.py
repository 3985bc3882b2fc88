"""Generate's attention grid as a person sees it (SVG export): one row per new token, labelled, every
cell under its context column, and the keys a row could not see hatched."""

from __future__ import annotations

import pytest
from screen_reader import find_columns, find_rows, read_svg, slot_colours
from test_app_support import app_for, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.app.widgets.heatmap import Heatmap


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_generate_grid_rows_are_new_tokens_over_the_whole_context(size):
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "abcd"), ("max_new_tokens", "4"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.shape == (4, 4)  # cross-attention: 4 new tokens x the 4 source bytes
        shot = read_svg(app.export_screenshot(), *size)
        cols = find_columns(shot, heatmap.col_labels)
        assert cols is not None, shot.text()
        ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
        assert ys[0] >= 0, shot.text()
        for y in (y for y in ys if y >= 0):
            for j, colours in enumerate(slot_colours(shot, y, cols, 4)):
                assert len(colours) == 1 and colours != {shot.base}, (y, j, colours, shot.text())


async def test_decoder_only_rows_hatch_the_keys_not_yet_generated():
    size = (160, 48)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "abc"), ("max_new_tokens", "4"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.shape == (4, 3 + 4) and heatmap.col_labels[:3] == ["a", "b", "c"]
        shot = read_svg(app.export_screenshot(), *size)
        cols = find_columns(shot, heatmap.col_labels)
        assert cols is not None, shot.text()
        ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
        for i, y in enumerate(ys):
            for j in range(7):
                cell = "".join(shot.chars[y][cols.x0 + j * cols.slot:cols.x0 + (j + 1) * cols.slot])
                assert ("╱" in cell) == (j >= 3 + i), (i, j, cell, shot.text())
