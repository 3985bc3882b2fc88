"""What a Tab costs as a person sees it: Tab pressed in a form until the screen shows the focus moved.

The app runs in tmux (tests/support/walk.py, the walk the tests use) beside a 2-thread torch matmul loop (unless
`--idle`). In the Architecture form (`1`, then `i` into its first field) each Tab is timed from sending
it until the screen, read with its colours every few ms, differs from the one before it; then the walk
waits for the screen to settle before the next. Prints the times per size, their medians and maxima,
and last one JSON object.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/tab_cost.py [--tabs 12] [--sizes 80x24,160x48] [--idle]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from walk import Busy, Walk  # noqa: E402


def tab_times(cols: int, rows: int, tabs: int) -> list[float]:
    w = Walk([], cols, rows, seed=0)
    try:
        w.wait_for("shipped toy", timeout=90)  # the live model is in: nothing else redraws meanwhile
        w.press("1")
        w.wait_steady(1.0, timeout=30)
        w.press("i")
        w.wait_for(lambda s: "q quit" not in s.rstrip("\n").splitlines()[-1], timeout=30)  # in a field
        times = []
        for _ in range(tabs):
            before = _colours(w)
            start = time.monotonic()
            w.press("Tab", rate=1000)
            while _colours(w) == before:
                if time.monotonic() - start > 30:
                    raise RuntimeError("a Tab changed nothing on screen within 30 s")
                time.sleep(0.003)
            times.append(round(time.monotonic() - start, 3))
            w.wait_steady(0.4, timeout=30)
        return times
    finally:
        w.close()


def _colours(w: Walk) -> str:
    return w.tmux.command(f"capture-pane -p -e -t {w.pane}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=12)
    parser.add_argument("--sizes", default="80x24,160x48")
    parser.add_argument("--idle", action="store_true", help="no busy process beside the app")
    args = parser.parse_args()
    busy = None if args.idle else Busy()
    out: dict[str, dict[str, object]] = {}
    try:
        time.sleep(0 if args.idle else 3)  # the busy loop's torch import is over before the launch
        for size in args.sizes.split(","):
            cols, rows = (int(n) for n in size.split("x"))
            times = tab_times(cols, rows, args.tabs)
            out[size] = {"median_s": round(statistics.median(times), 3), "max_s": max(times), "times_s": times}
            print(f"{size}: Tab to screen {times} (median {out[size]['median_s']} s, max {max(times)} s)",
                  flush=True)
    finally:
        if busy is not None:
            busy.stop()
    print(json.dumps({"busy": not args.idle, "sizes": out, "cpus": os.cpu_count(),
                      "load_avg": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
