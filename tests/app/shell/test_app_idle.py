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
        frames: list = []

        def counted(screen, renderable):
            if renderable is not None:
                frames.append(renderable)
            return display(screen, renderable)

        app._display = counted
        for view in VIEWS:
            app.show_view(view)
            await pilot.pause(0.3)
            app.set_focus(None)  # a focused Input's cursor blinks: a person's choice, not idling work
            if view == "train":
                await pilot.pause(1.2)  # the Train view's 1 Hz redraw draws the view once after it is shown
                train = app.view("train")  # drawn only while shown: a loaded machine's tick comes late
                await wait_for(pilot, lambda: not train.dirty, 30)  # noqa: B023 - awaited here
            # Settled: 0.3 s without a frame (was a fixed 1.8 s for every view). A view that never stops
            # painting never settles and fails here, as it would below.
            await _quiet(pilot, frames, 0.3, timeout=20, view=view)
            frames.clear()
            await asyncio.sleep(1.5)
            assert not frames, f"{view}: {len(frames)} frames in 1.5 s with nothing running"
        app._display = display


async def _quiet(pilot, frames: list, window: float, timeout: float, view: str) -> None:
    """Until `window` seconds pass with no frame painted; fails after `timeout` seconds of frames."""
    start = asyncio.get_running_loop().time()
    while True:
        frames.clear()
        await asyncio.sleep(window)
        if not frames:
            return
        assert asyncio.get_running_loop().time() - start < timeout, f"{view}: still painting after {timeout} s"
