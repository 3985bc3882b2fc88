"""What runs between the first frame and the first keys imports no torch (issue 39 point 4): the App's note of a
served session's kept run, read right after the first view, imported the training package (torch: ~10 s of the
event loop beside a busy CPU) in a terminal app, which keeps no run; so did quitting."""

from __future__ import annotations

import os
import subprocess
import sys

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
