"""Speed at 80x24, read from the rendered screen: the lengths field shows its numbers whole (issue 36 item 7: it
showed "new tokens 51" while the run measured 512, the buttons' fixed width leaving the field three columns)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_ready
from screen_rules import cut_numbers
from textual.widgets import Button, Input

SMALL = (80, 24)


async def test_the_lengths_show_whole_at_80x24():
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        app.show_view("speed")
        await pilot.pause()
        row = next(line for line in screen_lines(app) if "new tokens" in line)
        assert "new tokens 512 " in row, row  # the demo's length, the placeholder, whole
        app.query_one("#sp-lengths", Input).value = "64 128 512"
        app.query_one("#sp-run", Button).focus()
        await pilot.pause()
        lines = screen_lines(app)
        row = next(line for line in lines if "new tokens" in line)
        assert "new tokens 64 128 512 " in row, row
        assert "Run r" in row and "Cancel x" in row, row
        assert not cut_numbers(lines, SMALL[0]), cut_numbers(lines, SMALL[0])
