"""Every view's tab is on screen and can be clicked, at 80 columns too."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, view_mounted, wait_for

from tui_lab.app.app import TABS_WIDTH, VIEWS
from tui_lab.app.widgets.narrow_row import NARROW_BELOW


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_tab_is_on_screen_and_the_last_one_opens_by_click(size):
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=size) as pilot:
        await view_mounted(pilot, VIEWS[-1].id)
        await pilot.pause()
        bar = screen_lines(app)[1]
        for i, spec in enumerate(VIEWS):
            assert f"{i + 1} {spec.title}" in bar, bar  # drawn whole, on the line under the header
            assert app.query_one(f"#--content-tab-{spec.id}").region.right <= size[0]
        await pilot.click(f"#--content-tab-{VIEWS[-1].id}")
        await wait_for(pilot, lambda: app.query_one("#views").active == VIEWS[-1].id, 60)


def test_the_rows_stack_below_the_width_where_the_tabs_lose_their_padding():
    assert NARROW_BELOW == TABS_WIDTH  # widgets/narrow_row.py: one width for both
