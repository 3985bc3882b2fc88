"""The Tour names n and p only where they move: on its first page `p back` is not on the page's key line and is
dimmed in the footer, on its last `n next` likewise (issue 36's crawler, seed 659632591: `enter ctrl+pageup 3 p`
pressed p on the first page, named on screen, and nothing changed)."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from app_tour_support import go_to, open_tour
from footer_support import footer_says

from tui_lab.app.views.tour.steps import STEPS


def nav_line(app) -> str:
    """The Tour's key line: the page dots, then its keys."""
    return next(line for line in screen_lines(app) if "●" in line)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_first_page_does_not_name_back_nor_the_last_next(size):
    app = app_for()
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        tour = await open_tour(pilot)
        assert tour.step == 0
        assert "p back" not in nav_line(app) and "n next" in nav_line(app), screen_text(app)
        await footer_says(pilot, "back", False)  # dimmed: shown where it always is, but off
        await footer_says(pilot, "next", True)
        before = screen_text(app)
        await pilot.press("p")  # not named, and it does nothing
        await pilot.pause()
        assert tour.step == 0 and screen_text(app) == before

        await pilot.press("n")
        await wait_for(pilot, lambda: tour.ready and tour.step == 1)
        await wait_for(pilot, lambda: "p back" in nav_line(app))
        await footer_says(pilot, "back", True)
        await pilot.press("p")  # named again, and it moves
        await wait_for(pilot, lambda: tour.ready and tour.step == 0)
        await wait_for(pilot, lambda: "Step 1 of" in screen_text(app))

        await go_to(pilot, tour, len(STEPS) - 1)
        await wait_for(pilot, lambda: "n next" not in nav_line(app) and "p back" in nav_line(app))
        await footer_says(pilot, "next", False)
        await footer_says(pilot, "back", True)
