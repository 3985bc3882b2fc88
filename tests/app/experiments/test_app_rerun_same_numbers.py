"""r on a finished run whose options fix its seed draws the same numbers: the figures stand still, so the status
says which run in a row this is and why nothing moved, and each further r says so anew (the long tier's English
160x48 walk read r on a finished order-blindness as a dead press). A run with another seed is new numbers."""

from __future__ import annotations

from app_experiments_support import open_view
from app_support import app_for, screen_text, wait_for
from textual.widgets import Input


async def _run(pilot, view) -> str:
    before = view.finished
    await pilot.press("r")
    await wait_for(pilot, lambda: not view.running and view.finished is not before, 120)
    await pilot.pause(0.3)
    return screen_text(pilot.app)


async def test_r_again_on_a_fixed_seed_says_the_same_numbers_and_why():
    """Float rounding may move a noise column (4.8e-07 to 2.4e-07) between the first runs of a process: that run
    shows new numbers. Every run changes the screen; the runs that repeat the last say so, counted."""
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        view = await open_view(pilot)
        assert view.selected == "order-blindness"
        screens = [await _run(pilot, view)]
        assert "order-blindness done in" in screens[0] and "same numbers" not in screens[0]
        for _ in range(3):
            screens.append(await _run(pilot, view))
            assert screens[-1] != screens[-2]  # no dead press
            if view.repeats:
                assert f"the same numbers (run {view.repeats + 1} in a row: seed=0 fixes them)" in screens[-1]
        assert view.repeats >= 1, screens[-1]  # the draw is seeded: a repeat came
        view.query_one("#ex-options", Input).value = "seed=5"
        assert "same numbers" not in await _run(pilot, view)
