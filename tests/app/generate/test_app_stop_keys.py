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


def greedy_then_slow(model, codec, ids, settings, **kwargs):
    """`complete` whose greedy run is instant and whose other modes run until stopped (beam search on a large model:
    seconds), polling `should_stop` as the sampling loop does."""
    from tui_lab.generation.session import Completion

    if settings.temperature > 0 or settings.beam_size > 1:
        while not kwargs["should_stop"]():
            time.sleep(0.05)
        return Completion([5, 6], 9.0, slid=False, cropped=False, cancelled=True)
    return Completion([7, 8, 9], 0.01, slid=False, cropped=False, cancelled=False)


async def test_stop_during_a_comparison_says_so_in_the_boxes_still_to_come(monkeypatch):
    """The long tier's translator 160x48 walk at a3f1987 (seed 730475785): `m`, then `s` while the beam box still
    read "...": Stop's colour changed and nothing else, and the beam box filled later as if never stopped. Now the
    boxes still to come say "stopped (s)", the one already in keeps its text, and nothing arrives after."""
    monkeypatch.setattr("tui_lab.generation.session.complete", greedy_then_slow)
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        view, stop = await generate_view(app, pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: "temperature 0" in screen_text(app) and view.running, 30)
        assert screen_text(app).count("...") == 3
        await pilot.press("s")
        await wait_for(pilot, lambda: screen_text(app).count("stopped (s)") == 3, 30)
        await wait_for(pilot, lambda: not any(w.group == "generate" and not w.is_finished for w in app.workers), 30)
        await pilot.pause(0.3)
        text = screen_text(app)
        assert text.count("stopped (s)") == 3 and "temperature 0" in text and "9.00 s" not in text
        assert not view.running and stop.disabled


async def test_stop_during_a_side_by_side_says_so_in_the_side_still_to_come(monkeypatch):
    """The side by side (`v`) the same way: the live side in, s before the second model's: that side says
    "stopped (s)", and the job posts nothing after the stop."""
    from textual.app import App

    from tui_lab.app.views.generate import versus

    class Boxes(App):
        def compose(self):
            yield versus.VersusPanel()

    class Worker:
        is_cancelled = False

    worker, posted = Worker(), []

    def decode(job, side, *args, **kwargs):
        worker.is_cancelled = side == "live"  # s pressed while the live side was decoding
        return versus.VersusResult(job, side, side, f"{side} text", "greedy")

    monkeypatch.setattr(versus, "_decode", decode)
    monkeypatch.setattr(versus, "get_current_worker", lambda: worker)
    partner = type("Partner", (), {"model": None, "tokenizer": None, "label": "nat"})()
    versus.versus_job(type("Poster", (), {"post_message": staticmethod(posted.append)})(), 1, (None, None), "nat",
                      {"nat": partner}, "a prompt", None)
    assert posted == []  # cut off at once: the side under way is not shown as if whole
    app = Boxes()
    async with app.run_test(size=(100, 12)) as pilot:
        panel = app.query_one(versus.VersusPanel)
        panel.waiting()
        panel.show(versus.VersusResult(1, "live", "live: at", "live text", "greedy"))
        panel.stopped()
        await pilot.pause()
        text = screen_text(app)
        assert "live text" in text and text.count("stopped (s)") == 1 and "..." not in text
