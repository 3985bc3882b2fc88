"""A Tour page's grid focused at 80x24 keeps the footer whole: the Tour's keys and q quit, not the grid's
# and z too (issue 36's crawler, 3 n shift+tab: q quit was pushed off and the keys overlapped)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from footer_support import footer_keys

from tui_lab.app.widgets.heatmap import Heatmap


async def test_a_focused_tour_grid_leaves_the_footer_its_keys():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("3", "n")
        await wait_for(pilot, lambda: bool(app.query(Heatmap)), 60)
        for _ in range(6):  # back through the page to its grid
            if isinstance(app.focused, Heatmap):
                break
            await pilot.press("shift+tab")
            await pilot.pause()
        assert isinstance(app.focused, Heatmap)
        await pilot.pause(0.3)
        footer = screen_lines(app)[-1]
        assert "q quit" in footer and "n next" in footer, footer
        assert "dense/full" not in footer and "numbers" not in footer
        assert footer_keys(app).get("next") is True
