"""Generate's s (Stop s) and a panel's x (Cancel x) act only while something runs: dimmed and disabled
otherwise (issue 36's crawler: named while nothing ran, they changed nothing)."""

from __future__ import annotations

import time

from app_support import app_for, screen_text, wait_for, wait_ready
from footer_support import enabled
from textual.widgets import Button, Input
from textual.worker import get_current_worker

from tui_lab.app.views.generate import jobs


def until_stopped() -> None:
    """The job's worker waits here until Stop cancels it."""
    worker = get_current_worker()
    while not worker.is_cancelled:
        time.sleep(0.05)


def waiting_stream(poster, job, *args, **kwargs):
    """A stream that waits for Stop, then says it was stopped."""
    until_stopped()
    poster.post_message(jobs.Finished(job, "", 0, 0.0, True))


async def generate_view(app, pilot):
    """The app ready, the Generate view open: (the view, its Stop button)."""
    await wait_ready(pilot)
    await pilot.press("5")
    return app.view("generate"), app.query_one("#gen-stop", Button)


async def test_stop_and_cancel_only_while_running(monkeypatch):
    monkeypatch.setattr(jobs, "stream_job", waiting_stream)
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view, stop = await generate_view(app, pilot)
        await wait_for(pilot, lambda: stop.disabled and enabled(app, "s") is False, 30)
        await pilot.press("g")
        await wait_for(pilot, lambda: view.running and not stop.disabled and enabled(app, "s") is True, 30)
        await pilot.press("s")
        await wait_for(pilot, lambda: not view.running and stop.disabled and enabled(app, "s") is False, 30)
        await pilot.press("p")  # the patching panel: its Cancel x waits for a run
        cancel = app.query_one("#patch-cancel", Button)
        await wait_for(pilot, lambda: app.query_one("#gen-patch").has_class("-shown"), 30)
        assert cancel.disabled and enabled(app, "x") is False
        panel = app.query_one("#gen-patch")

        def work(step):  # a measurement that goes until cancelled
            while True:
                step(0, 1)
                time.sleep(0.05)

        panel.start(work, 1, "measuring")
        await wait_for(pilot, lambda: not cancel.disabled and enabled(app, "x") is True, 30)
        await pilot.press("x")
        await wait_for(pilot, lambda: cancel.disabled and enabled(app, "x") is False, 60)


def waiting_compare(poster, job, *args, **kwargs):
    """A comparison that goes until stopped."""
    until_stopped()


async def test_a_panel_that_takes_the_room_stops_the_comparison_it_puts_away(monkeypatch):
    """`m`, then `l` while the comparison runs: the lens takes the room, the boxes go, and their job stops with them;
    Stop s is dimmed over the lens (the long tier, English 100x30, seed 782230373: s stayed lit for a comparison
    nobody could see, and pressing it changed nothing drawn)."""
    monkeypatch.setattr(jobs, "compare_job", waiting_compare)
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        view, stop = await generate_view(app, pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: view.running and not stop.disabled and enabled(app, "s") is True, 30)
        await pilot.press("l")
        await wait_for(pilot, lambda: app.query_one("#gen-lens").has_class("-shown"), 30)
        await wait_for(pilot, lambda: not view.running and stop.disabled and enabled(app, "s") is False, 30)
        await wait_for(pilot, lambda: not any(w.group == "generate" and not w.is_finished for w in app.workers), 30)


def slow_first_pass_stream(poster, job, *args, **kwargs):
    """A stream whose first pass takes a while and only then sees the stop (a large model's first decoder pass)."""
    time.sleep(1.5)
    poster.post_message(jobs.Finished(job, "", 0, 1.5, get_current_worker().is_cancelled, "0 tokens in 1.50 s"))


async def test_stop_says_so_at_once_while_the_pass_under_way_ends(monkeypatch):
    """The long tier's translator 160x48 walk at 7119a48 (seed 789767901): on a model its walk had made large,
    `g` then `s` before the first token: the screen kept "no tokens yet" and only Stop's colour changed. The
    status line says it is stopping at once, then that the run was stopped."""
    monkeypatch.setattr(jobs, "stream_job", slow_first_pass_stream)
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view, stop = await generate_view(app, pilot)
        await wait_for(pilot, lambda: stop.disabled, 30)
        await pilot.press("g")
        await wait_for(pilot, lambda: view.running, 30)
        await pilot.press("s")
        await pilot.pause()
        assert "stopping after the pass under" in screen_text(app)  # (it wraps at 80 columns)
        await wait_for(pilot, lambda: "stopped" in screen_text(app) and "stopping" not in screen_text(app), 30)


async def test_enter_in_a_sampling_field_generates_as_in_the_prompt(monkeypatch):
    """A person sets the temperature and presses Enter: a stream starts, as Enter in the prompt starts one (it did
    nothing, and a typing field's footer names no g)."""
    monkeypatch.setattr(jobs, "stream_job", waiting_stream)
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view, stop = await generate_view(app, pilot)
        field = app.query_one("#gen-temperature", Input)
        field.focus()
        field.value = ""
        await pilot.press("0", ".", "5", "enter")
        await wait_for(pilot, lambda: view.running and not stop.disabled, 30)
        assert field.value == "0.5"
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: not view.running, 30)
