"""A key whose effect a loaded machine draws late is not a dead press: the long tier's translator 160x48 walk at
51361c5 (seed 708064202, nine cases at once) read Architecture's Esc as changing nothing, though it had left the
field: the focus had moved, and the footer (told of a focus change frames later) still said `esc leave`."""

from __future__ import annotations

import asyncio

from app_support import app_for
from crawler import Crawler, _no_idle_waits
from textual.screen import Screen

from tui_lab.app.shell.view_focus import in_field


def test_esc_that_leaves_a_field_before_the_footer_follows_is_not_a_dead_press(monkeypatch):
    async def run() -> None:
        crawler = Crawler(["--preset", "transformer-2017-toy-numbers-de"], (160, 48), seed=1)
        app = app_for(*crawler.argv)
        with _no_idle_waits():
            async with app.run_test(size=crawler.size) as pilot:
                await crawler.attach(pilot, app)
                for key in ("1", "i"):  # Architecture, its first field
                    await crawler._press(key, None)
                assert in_field(app.focused), app.focused
                publish = Screen.refresh_bindings

                def late(screen) -> None:  # the footer told a second late, as on a machine at load 12
                    screen.set_timer(1.0, lambda: publish(screen))

                monkeypatch.setattr(Screen, "refresh_bindings", late)
                await crawler._press("escape", ["1", "i"])
                assert not in_field(app.focused)
                assert not crawler.report.failures, crawler.report.failures[0]
                # the state it goes on from is the one drawn once the footer has followed the focus
                assert "q quit" in crawler._lines()[-1] and "esc leave" not in crawler._lines()[-1]

    asyncio.run(run())
