"""An app left alone paints nothing: no view animates while nothing runs.

A ProgressBar without a total animates at 15 frames a second; the Train and Speed views' bars did that before
their first run, ~8% of a core for nothing (and the same share taken from a run on another view's cores)."""

from __future__ import annotations

import asyncio

import pytest
from app_support import app_for, view_mounted, wait_for

from tui_lab.app.app import VIEWS as ALL_VIEWS

VIEWS = ("architecture", "attention", "train", "generate", "speed", "experiments")


@pytest.mark.parametrize("view", VIEWS)
async def test_an_idle_view_paints_no_frame(view):
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for spec in ALL_VIEWS:  # the hidden views mounting (a loaded machine: seconds) is not idling
            await view_mounted(pilot, spec.id)
        app.show_view(view)
        await pilot.pause(0.3)
        app.set_focus(None)  # a focused Input's cursor blinks: a person's choice, not idling work
        await pilot.pause(1.2)  # the Train view's 1 Hz redraw draws the view once after it is shown
        train = app.view("train")  # drawn only while shown: a loaded machine's tick comes late
        await wait_for(pilot, lambda: view != "train" or not train.dirty, 30)
        await pilot.pause(0.3)
        frames = []
        display = app._display

        def counted(screen, renderable):
            if renderable is not None:
                frames.append(renderable)
            return display(screen, renderable)

        app._display = counted
        await asyncio.sleep(1.5)
        assert not frames, f"{view}: {len(frames)} frames in 1.5 s with nothing running"
