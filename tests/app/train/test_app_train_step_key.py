"""Train `n` at 80x24, read from the rendered screen: it acts only while a built run is paused, and is dimmed with
its "Step n" button otherwise (before a run, while one runs, after it), so a press never changes nothing while
the screen names it (issue 36: the crawler's long tier met n named by its button and changing nothing)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import start_paused, stop, train_view
from textual.widgets import Button


def _step_shown(app) -> str:
    return next((word for line in screen_lines(app) for word in line.split() if "/40" in word), "")


async def _still(pilot, app) -> list[str]:
    """The screen once two reads 50 ms apart agree: the tab bar's underline slides for a moment after a view opens
    (a busy machine read it mid-slide as the press's doing)."""
    before = screen_lines(app)
    for _ in range(100):
        await pilot.pause(0.05)
        now = screen_lines(app)
        if now == before:
            return now
        before = now
    return before


async def _dimmed(pilot, app) -> None:
    """n does not apply: not enabled, its button disabled, and a press leaves the screen as it was."""
    assert not app.active_bindings["n"].enabled and app.query_one("#tf-step", Button).disabled
    notes, before = len(app._notifications), await _still(pilot, app)
    await pilot.press("n")
    await pilot.pause()
    assert screen_lines(app) == before and len(app._notifications) == notes


async def test_n_steps_a_paused_run_and_is_dimmed_otherwise():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        view = await train_view(pilot)
        await pilot.pause()
        await _dimmed(pilot, app)  # no run yet
        await start_paused(pilot, view)
        await wait_for(pilot, lambda: app.active_bindings["n"].enabled, 30)
        assert not app.query_one("#tf-step", Button).disabled
        await wait_for(pilot, lambda: _step_shown(app) == "0/40", 30)
        await pilot.press("n")
        await wait_for(pilot, lambda: _step_shown(app) == "1/40", 60)  # the step, on screen
        await pilot.press("p")  # running: n waits for a pause
        await wait_for(pilot, lambda: not app.active_bindings["n"].enabled, 30)
        assert app.query_one("#tf-step", Button).disabled
        await stop(pilot, view)
        await wait_for(pilot, lambda: not view.training, 60)
        await pilot.pause()
        assert not app.active_bindings["n"].enabled and app.query_one("#tf-step", Button).disabled  # after the run
        # the palette's "one step" still says why
        view.action_step()
        await pilot.pause()
        assert any("step mode works while a run is paused" in str(n.message) for n in app._notifications)
