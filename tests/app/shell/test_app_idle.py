"""An app left alone paints nothing: no view animates while nothing runs.

A ProgressBar without a total animates at 15 frames a second; the Train and Speed views' bars did that before
their first run, ~8% of a core for nothing (and the same share taken from a run on another view's cores)."""

from __future__ import annotations

import asyncio

from app_support import app_for, view_mounted, wait_for

from tui_lab.app.app import VIEWS as ALL_VIEWS

VIEWS = ("architecture", "attention", "train", "generate", "speed", "experiments")


async def test_no_idle_view_paints_a_frame():
    """Each view in turn, in one app (its boot and the mounting of every view paid once): shown, settled, then
    watched for 1.5 s."""
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for spec in ALL_VIEWS:  # the hidden views mounting (a loaded machine: seconds) is not idling
            await view_mounted(pilot, spec.id)
        display = app._display
        for view in VIEWS:
            app.show_view(view)
            await pilot.pause(0.3)
            app.set_focus(None)  # a focused Input's cursor blinks: a person's choice, not idling work
            await pilot.pause(1.2)  # the Train view's 1 Hz redraw draws the view once after it is shown
            train = app.view("train")  # drawn only while shown: a loaded machine's tick comes late
            await wait_for(pilot, lambda: view != "train" or not train.dirty, 30)  # noqa: B023 - awaited here
            await pilot.pause(0.3)
            frames = []

            def counted(screen, renderable, frames=frames):
                if renderable is not None:
                    frames.append(renderable)
                return display(screen, renderable)

            app._display = counted
            await asyncio.sleep(1.5)
            app._display = display
            assert not frames, f"{view}: {len(frames)} frames in 1.5 s with nothing running"
