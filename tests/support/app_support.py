"""Helpers for the app's Pilot tests (no tests here): start the app, wait for the live model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tui_lab.cli.launch import make_app

SIZE = (120, 40)


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 90.0) -> None:
    """Until `condition` holds; the timeout is generous since a loaded 2-core machine is slow, not wrong."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.05)


async def view_mounted(pilot, view_id: str, timeout: float = 90.0):
    """The view once mounted: its parts composed and their on_mount run. It is in the DOM (a query finds it) a
    moment before that; a field set then was overwritten by the form's own defaults when its on_mount ran."""
    app = pilot.app
    await wait_for(pilot, lambda: bool(app.query(f"#view-{view_id}")) and app.view(view_id).is_mounted, timeout)
    return app.view(view_id)


async def wait_ready(pilot, generation: int = 1) -> None:
    """Until the live model of `generation` is installed (the first build is generation 1)."""
    await wait_for(pilot, lambda: pilot.app.live.generation >= generation and not pilot.app.live.building)
    await pilot.pause()


async def open_view(pilot, view_id: str, key: str) -> None:
    """The live model ready, the view mounted, then its number key pressed: the view shown as a person opens it."""
    await wait_ready(pilot)
    await view_mounted(pilot, view_id)
    await pilot.press(key)


async def attention_grids(pilot):
    """The Attention view opened by its key once the live model is ready, with the live model's grids captured."""
    await wait_ready(pilot)
    await pilot.press("2")
    view = pilot.app.view("attention")
    await wait_for(pilot, lambda: view.captured_generation >= 1 and view.grids)
    return view


def app_for(*argv: str, build: bool = True):
    return make_app(list(argv), build=build)


def run(coro) -> None:
    asyncio.run(coro)


def screen_lines(app) -> list[str]:
    """The rendered screen as plain text, one string per terminal row: what a person sees, not widget fields."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False, safe_box=False, color_system=None)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()[:height]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))
