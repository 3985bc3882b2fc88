"""Open the Experiments view with a small model."""

from __future__ import annotations

from app_support import view_mounted, wait_ready

SMALL = (80, 24)


async def open_view(pilot):
    app = pilot.app
    await wait_ready(pilot)
    await view_mounted(pilot, "experiments")
    await pilot.press("f7")
    await pilot.pause()
    return app.view("experiments")

