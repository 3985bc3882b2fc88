"""What runs between the first frame and the first keys imports no torch (issue 39 point 4): the App's note of a
served session's kept run, read right after the first view, imported the training package (torch: ~10 s of the
event loop beside a busy CPU) in a terminal app, which keeps no run; so did quitting."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tui_lab.served import ENV

PROBE = """
import sys
from tui_lab.app.live.keeper import LiveModelKeeper

keeper = LiveModelKeeper(None, None, list)  # a terminal app: no served policy in the environment
keeper.say_kept_run()
keeper.keep()
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("tui_lab.train")))
"""


def test_a_terminal_app_says_no_kept_run_and_keeps_nothing_without_importing_torch():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != ENV})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


async def test_a_view_opened_at_the_first_frame_mounts_alone(monkeypatch):
    """`2` at the first frame: the Attention view mounts at once, and no hidden view mounts beside it (one did, and
    took half the CPU the key's view had)."""
    from app_support import app_for

    from tui_lab.app.shell import view_mounting
    from tui_lab.app.shell.view_mounting import ViewMounting

    # The hidden views mount as soon as the first view is in when no key has come yet (quiet since -inf): a worker
    # starved beside two others (CI) sent its key after two of them had mounted, in three clean-clone runs of five.
    # The case under test is a key that comes first: the app is held as if a key had just come as the Tour's mount
    # ended, with a quiet no busy machine outlasts, until the key is asked for; then the quiet is the app's own and
    # the mounting loop wakes as its own timer would. (A 5 s hold, from before the app started and then from the
    # Tour's end, was outlasted by a worker starved beside two others: two clean-clone runs.)
    quiet = view_mounting.KEY_QUIET_S
    monkeypatch.setattr(view_mounting, "KEY_QUIET_S", 3600.0)

    app = app_for(build=False)  # bare: the Tour first
    events: list[tuple[str, str]] = []
    mount, mount_now = ViewMounting._mount, ViewMounting.mount_now

    async def recording(self, spec):
        events.append(("start", spec.id))
        try:
            await mount(self, spec)
        finally:
            events.append(("end", spec.id))
            if spec.id == "tour":
                app.keys.last_key_at = time.monotonic()

    def asked(self, view_id):
        if any(spec.id == view_id for spec in self._unmounted):  # the key came before its view mounted
            events.append(("asked", view_id))  # (a busy machine may have begun a hidden view by then)
        mount_now(self, view_id)
        if view_mounting.KEY_QUIET_S != quiet:  # the hold ends with the key
            monkeypatch.setattr(view_mounting, "KEY_QUIET_S", quiet)
            self.app.set_timer(quiet, self.mount_next)

    ViewMounting._mount, ViewMounting.mount_now = recording, asked
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("2")
            while len(app.views()) < 3:
                await pilot.pause(0.05)
    finally:
        ViewMounting._mount, ViewMounting.mount_now = mount, mount_now
    assert events[:2] == [("start", "tour"), ("end", "tour")], events
    assert ("asked", "attention") in events, events  # the key came first (Tour's mount, then 0.5 s without keys)
    asked = events.index(("asked", "attention"))
    started_after = [view for what, view in events[asked:] if what == "start"]
    assert started_after[0] == "attention", events  # the key's view next: no hidden view started before it
    open_now = 0
    for what, _ in events:
        if what == "asked":
            continue
        open_now += 1 if what == "start" else -1
        assert open_now <= 1, events
