"""Experiments' x (Cancel x) and f (figure) are dimmed while they have nothing to act on, and act once a run
goes or a result has figures to turn through (issue 36's crawler: they were named and changed nothing)."""

from __future__ import annotations

import threading

from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready
from footer_support import enabled, footer_says
from textual.widgets import Button, Select

from tui_lab.experiments.result import Curve, Plot, Result, Table


def result() -> Result:
    plot = Plot("loss", "step", "loss", [Curve("a", [0.0, 1.0], [2.0, 1.0])])
    return Result("stub", {}, scalars={"x": 1}, plots={"loss": plot}, tables={"t": Table("t", ["a"], [[1]])},
                  seconds=0.5)


async def test_cancel_and_figure_keys_follow_the_run():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "experiments")
        await pilot.press("7")
        view = app.view("experiments")
        cancel = app.query_one("#ex-cancel", Button)
        await footer_says(pilot, "figure", False)  # no result yet: f dimmed
        assert cancel.disabled and enabled(app, "x") is False and enabled(app, "f") is False
        go = threading.Event()

        def work(poster):  # a run that waits until cancelled (or let go)
            while not (poster.stopped or go.wait(0.05)):
                pass
            if poster.stopped:
                from tui_lab.app.background_job import JobCancelled

                raise JobCancelled
            return result()

        view.start_job(work, total=1.0, label="stub")
        await wait_for(pilot, lambda: not cancel.disabled and enabled(app, "x") is True, 10)
        await pilot.press("x")
        await wait_for(pilot, lambda: "stub cancelled" in screen_text(app), 30)
        assert cancel.disabled and enabled(app, "x") is False
        go.set()
        view.start_job(work, total=1.0, label="stub")
        await wait_for(pilot, lambda: view.result is not None, 30)
        await footer_says(pilot, "figure", True)  # three figures: f turns to the next
        picker = app.query_one("#ex-figure", Select)
        shown = picker.value
        await pilot.press("f")
        await wait_for(pilot, lambda: picker.value != shown, 10)
