"""Train's p (pause) and x (stop) are dimmed while no run goes, with their buttons; g is dimmed while a run
goes unpaused (issue 36's crawler: p named with no run, and g while a run was built, changed nothing)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import train_view
from footer_support import enabled, footer_says
from textual.widgets import Button, Input


async def train_open(pilot):
    """The app ready, the Train view open by its key: the view."""
    await wait_ready(pilot)
    view = await train_view(pilot)
    await pilot.press("4")
    return view


async def test_run_keys_apply_only_while_they_act(monkeypatch):
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await train_open(pilot)
        pause, stop = app.query_one("#tf-pause", Button), app.query_one("#tf-stop", Button)
        await footer_says(pilot, "pause", False)
        await footer_says(pilot, "start", True)
        assert pause.disabled and stop.disabled and enabled(app, "x") is False
        await pilot.press("g")
        await wait_for(pilot, lambda: view.training, 10)
        await footer_says(pilot, "start", False)  # a run goes (being built, then running): g has nothing to do
        await footer_says(pilot, "pause", True)
        assert not pause.disabled and not stop.disabled
        await pilot.press("p")
        await wait_for(pilot, lambda: view.state.held_paused, 60)
        await footer_says(pilot, "start", True)  # paused: g resumes, as the Resume button says
        await footer_says(pilot, "resume", True)  # and p is named for what it does now, as its button
        await footer_says(pilot, "pause", None)
        assert pause.label.plain == "Resume p" and "q quit" in screen_lines(app)[-1]  # it fits at 80 columns
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.training, 120)
        await footer_says(pilot, "pause", False)
        assert pause.disabled and stop.disabled


async def test_x_is_dimmed_once_a_stop_is_asked_for(monkeypatch):
    """The long tier's translator 100x30 walk at 7119a48 (seed 880794063): `g x x` while the trainer was built,
    and the second x, named by the Stop button, changed nothing. Once a stop is asked for, x and Stop are dimmed
    until the run ends; the palette's stop says it is already stopping."""
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")
    app = app_for()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        view = await train_open(pilot)
        stop = app.query_one("#tf-stop", Button)
        await pilot.press("g")
        await wait_for(pilot, lambda: view.training, 10)
        await pilot.press("x")
        await pilot.pause()
        assert view.training and view.session.control.stopped  # the trainer is still being built: it goes on
        assert stop.disabled and enabled(app, "x") is not True
        view.action_stop()  # as the command palette's stop does
        await pilot.pause()
        assert any("already stopping" in n.message for n in app._notifications)
        await wait_for(pilot, lambda: not view.training, 120)
        await pilot.press("g")  # a new run: x is live again
        await wait_for(pilot, lambda: view.training, 10)
        assert not stop.disabled and enabled(app, "x") is True
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.training, 120)


async def test_enter_in_a_form_field_starts_as_g_does_and_the_folder_field_starts_nothing(monkeypatch):
    """A person types the steps and presses Enter: the run starts, as g would (Enter did nothing, and a typing
    field's footer offers no g). Enter in the checkpoint folder (Save's and Load's) starts nothing."""
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await train_open(pilot)
        app.query_one("#tf-folder", Input).focus()
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert not view.training
        steps = app.query_one("#tf-steps", Input)
        steps.focus()
        steps.value = ""
        await pilot.press("2", "0", "enter")
        await wait_for(pilot, lambda: view.training, 10)
        await pilot.press("escape", "x")
        await wait_for(pilot, lambda: not view.training, 120)
