"""JobView: a job's progress and result reach the widget that started it and no other (a panel inside a view,
as the MHA/GQA/MQA panel sits in Speed); an error is one line; Cancel stops the work between steps."""

from __future__ import annotations

import threading
from typing import Any

from app_support import wait_for
from textual.app import App, ComposeResult
from textual.widgets import Button, ProgressBar

from tui_lab.app.background_job import JobCancelled, JobDone, JobPoster, JobView


class Box(JobView):
    JOB_PROGRESS = "ProgressBar"

    def __init__(self, prefix: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefix, self.finished, self.progressed = prefix, [], []
        self.JOB_BUTTONS = {f"{prefix}-cancel": "cancel_job"}

    def compose(self) -> ComposeResult:
        yield ProgressBar(total=1)
        yield Button("Cancel", id=f"{self.prefix}-cancel")

    def job_progress(self, message) -> None:
        super().job_progress(message)
        self.progressed.append(message.done)

    def job_finished(self, done: JobDone, label: Any) -> None:
        self.finished.append((label, done.result, done.error, done.cancelled))


class Outer(Box):
    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Box("inner", id="inner")


class Lab(App):
    def compose(self) -> ComposeResult:
        yield Outer("outer", id="outer")


def until_stopped(started: threading.Event):
    def work(poster: JobPoster) -> Any:
        started.set()
        for step in range(10_000):
            if poster.stopped:
                raise JobCancelled
            poster.progress(step, 10_000)
            threading.Event().wait(0.01)
        return "never"
    return work


async def test_a_panels_job_reaches_the_panel_only():
    app = Lab()
    async with app.run_test(size=(80, 24)) as pilot:
        outer, inner = app.query_one("#outer", Outer), app.query_one("#inner", Box)
        outer.start_job(lambda poster: "outer's", total=1)
        await wait_for(pilot, lambda: outer.finished)
        inner.start_job(lambda poster: (poster.progress(1, 2), 42)[1], total=2)
        await wait_for(pilot, lambda: inner.finished)
        await pilot.pause()
        assert inner.finished == [(True, 42, None, False)] and inner.progressed == [1]
        assert inner.running is None and inner.job == 1
        # The same job number (1), but the panel's: bubbled up, it would read as the outer's second result.
        assert outer.finished == [(True, "outer's", None, False)] and outer.progressed == [] and outer.job == 1


async def test_an_error_is_one_line_and_cancel_stops_the_work():
    app = Lab()
    async with app.run_test(size=(80, 24)) as pilot:
        outer = app.query_one("#outer", Outer)

        def broken(poster: JobPoster) -> None:
            raise ValueError("lengths must be >= 1\nsecond line")

        outer.start_job(broken, total=1, label="broken")
        await wait_for(pilot, lambda: outer.finished)
        assert outer.finished == [("broken", None, "lengths must be >= 1", False)]
        started = threading.Event()
        outer.start_job(until_stopped(started), total=10_000, label="long")
        await wait_for(pilot, lambda: started.is_set() and outer.progressed)
        assert outer.running == "long"
        await pilot.click("#outer-cancel")  # the button map calls cancel_job
        await wait_for(pilot, lambda: len(outer.finished) == 2, 60)
        assert outer.finished[1] == ("long", None, None, True) and outer.running is None
        assert not outer.cancel_job()  # nothing runs: nothing to cancel


async def test_a_job_cancelled_before_its_thread_began_ends_cancelled_once():
    """x pressed at once on a busy machine: Textual drops a worker cancelled before its thread starts, so its work
    never ran to say it ended, and the view stayed 'cancelling...' with Cancel lit (tests/app/experiments'
    test_app_job_keys failed so beside three busy processes)."""
    app = Lab()
    async with app.run_test(size=(80, 24)) as pilot:
        outer = app.query_one("#outer", Outer)
        ran = threading.Event()
        outer.start_job(lambda poster: ran.set(), total=1, label="at once")
        assert outer.cancel_job()  # in the same tick: its thread has not begun
        await wait_for(pilot, lambda: outer.finished, 30)
        for _ in range(5):
            await pilot.pause(0.05)
        assert outer.finished == [("at once", None, None, True)] and outer.running is None
        assert not ran.is_set() and not outer.cancel_job()
