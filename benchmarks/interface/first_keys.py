"""How soon after the first frame `tui-lab` answers keys, in a real terminal beside a busy CPU (issue 23).

Each run starts the app in tmux at 80 x 24 (tests/support/walk.py: the walk the tests use) next to a 2-thread torch
matmul loop, and times from the first frame (the parameter count on screen). Bare `tui-lab` opens on the Tour,
`tui-lab --preset gpt2-toy` on the Architecture form; for each, a key pressed the moment the first frame shows
and one pressed a second later (when the views that are not shown mount behind the one that is):
  - tour:       bare; `n` at the first frame: seconds until the Tour's step 2 is on screen;
  - tour_late:  bare; `n` 1 s after the first frame: seconds from that press until step 2 is on screen;
  - view2:      bare; `2` at the first frame: seconds until the Attention view is on screen;
  - form:       --preset; seconds until the form is drawn (its rows on screen, and the Summary's cost);
  - type:       --preset; `i` and a digit at the first frame: seconds until the digit is in the first field;
  - type_late:  --preset; `i` and a digit 1 s after the first frame: seconds from that press until it shows.
Each run also gives the app's own CPU seconds over the same span (its process, from /proc): the wall time
follows the load (other work on the cores), the CPU seconds are what the app spent before the key acted.
Prints one line per run, the medians, and last one JSON object.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/first_keys.py [--runs 3] [--idle] [--probes tour,type]
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
from walk import Busy, Walk, field_text  # noqa: E402

FIRST_FRAME, ATTENTION, STEP_2 = "parameters", "text The streets", "Step 2 of"
PRESET = ["--preset", "gpt2-toy"]
LATE_S = 1.0  # a person reads the first frame for about a second before the first key
PROBES = ("tour", "tour_late", "view2", "form", "type", "type_late")


def _form_whole(screen: str) -> bool:
    """The Summary's cost line and the form's rows on screen at 80 x 24 (down to dropout) are drawn."""
    return "autoregressive" in screen and bool(field_text(screen, "dropout"))


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process `pid` so far (Linux /proc; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(seed: int, probe: str) -> tuple[float, float]:
    """(wall seconds, the app's CPU seconds) from the first frame (or the late key) until the key's effect."""
    w = Walk([] if probe in ("tour", "tour_late", "view2") else PRESET, 80, 24, seed=seed)
    try:
        w.wait_for(FIRST_FRAME, timeout=120, poll=0.005)
        start, cpu = time.monotonic(), cpu_seconds(w.pid)
        if probe.endswith("_late"):
            time.sleep(LATE_S - (time.monotonic() - start))
            start, cpu = time.monotonic(), cpu_seconds(w.pid)
        try:
            if probe.startswith("tour"):
                w.press("n", rate=1000)
                w.wait_for(STEP_2, timeout=60, poll=0.01)
            elif probe.startswith("type"):
                w.press("i", "7", rate=50)
                w.wait_for(lambda s: field_text(s, "encoder_layers") == "7", timeout=60, poll=0.01)
            elif probe == "view2":
                w.press("2", rate=1000)
                w.wait_for(ATTENTION, timeout=60, poll=0.01)
            else:
                w.wait_for(_form_whole, timeout=60, poll=0.01)
        except AssertionError:  # the keys never acted: say so, do not stop
            return float("nan"), float("nan")
        return time.monotonic() - start, cpu_seconds(w.pid) - cpu
    finally:
        w.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", action="store_true", help="no busy process beside the app")
    parser.add_argument("--probes", default=",".join(PROBES), help=f"a comma list of {', '.join(PROBES)}")
    args = parser.parse_args()
    busy = None if args.idle else Busy()
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    loads = []
    try:
        time.sleep(0 if args.idle else 3)  # the busy loop's torch import is over before the first launch
        for i in range(args.runs):
            for probe in args.probes.split(","):
                seconds, cpu = one_run(i, probe)
                times.setdefault(probe, []).append(round(seconds, 3))
                cpus.setdefault(probe, []).append(round(cpu, 2))
                loads.append(os.getloadavg()[0])
                late = " after the key" if probe.endswith("_late") else " after the first frame"
                print(f"run {i + 1} {probe}: {seconds:.2f} s{late}, the app's CPU {cpu:.2f} s (load {loads[-1]:.1f})",
                      flush=True)
    finally:
        if busy is not None:
            busy.stop()
    medians = {key: round(statistics.median(ts), 3) for key, ts in times.items()}  # nan: a key never acted
    cpu_medians = {key: round(statistics.median(ts), 2) for key, ts in cpus.items()}
    print("medians (s):", medians)
    print("the app's CPU, medians (s):", cpu_medians)
    print(json.dumps({"busy": not args.idle, "median_s": medians, "runs_s": times, "median_cpu_s": cpu_medians,
                      "runs_cpu_s": cpus, "cpus": os.cpu_count(),
                      "load_avg": [round(min(loads), 2), round(max(loads), 2)]}))


if __name__ == "__main__":
    main()
