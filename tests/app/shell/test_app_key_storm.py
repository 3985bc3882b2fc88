"""A storm of view keys (issue 24): 600 F-keys posted at once, faster than any typist (the walk fixture types one
and waits), end on the last key's view with nothing queued behind it. Times and memory are measured by
benchmarks/interface/key_storm.py, not asserted here."""

from __future__ import annotations

import random

from app_support import app_for, wait_for
from textual import events
from textual.widgets import TabbedContent

from tui_lab.app.app import VIEWS

STORM = 600


def queued(app) -> int:
    """Messages waiting anywhere: the app's queue, every screen's, every widget's."""
    nodes = [app, *app.screen_stack, *app.screen.walk_children()]
    return sum(node._message_queue.qsize() for node in nodes)


async def test_a_storm_of_view_keys_ends_on_the_last_view_with_nothing_behind_it():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.live.model is not None and not app.live.building, 60)
        rng = random.Random(24)
        keys = [f"f{rng.randint(1, len(VIEWS))}" for _ in range(STORM)]
        keys[-1] = "f4" if keys[-2] != "f4" else "f6"  # the last key moves to a view of its own
        for key in keys:
            app.post_message(events.Key(key, None))  # straight into the app's queue, no wait between keys
        await wait_for(pilot, lambda: queued(app) == 0, 120)
        await pilot.pause(0.5)
        want = VIEWS[int(keys[-1][1:]) - 1].id
        assert app.query_one("#views", TabbedContent).active == want
        assert app.view(want).display and queued(app) == 0
