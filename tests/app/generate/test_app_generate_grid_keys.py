"""Generate's attention grid focused at 80x24: the footer keeps the view's keys and q quit, and the grid's own keys
(z, #) are named under the grid once it has rows, and act (the crawler's '5 tab tab' pushed q quit off)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.app.widgets.heatmap import Heatmap


async def test_the_focused_grid_leaves_the_footer_its_keys_and_names_its_own_under_it():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("5")
        await pilot.pause()
        view = app.view("generate")
        app.query_one("#gen-max_new_tokens", Input).value = "6"
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        heatmap = app.query_one("#gen-att", Heatmap)
        heatmap.focus()
        await pilot.pause()
        lines = screen_lines(app)
        assert "q quit" in lines[-1] and "g generate" in lines[-1], lines[-1]
        assert any("z dense/full · # numbers" in line for line in lines), "\n".join(lines)
        for key in ("z", "number_sign"):
            before = screen_lines(app)
            await pilot.press(key)
            await pilot.pause()
            assert screen_lines(app) != before, f"{key} changed nothing"
