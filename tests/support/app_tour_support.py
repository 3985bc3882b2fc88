"""Open the Tour and go to one of its pages."""

from __future__ import annotations

from app_support import view_mounted, wait_for


async def open_tour(pilot):
    # The views mount after the first frame: on a loaded machine F3 can arrive before the Tour exists.
    await view_mounted(pilot, "tour", 60)
    await pilot.press("f3")
    tour = pilot.app.view("tour")
    await wait_for(pilot, lambda: tour.ready, timeout=60)
    await pilot.pause()
    return tour


async def go_to(pilot, tour, index: int) -> None:
    while tour.step < index:
        await pilot.press("n")
    await wait_for(pilot, lambda: tour.ready)
    await pilot.pause()

