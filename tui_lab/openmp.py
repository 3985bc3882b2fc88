"""How torch's OpenMP threads share the cores with the UI thread: the policy the app sets before torch loads
and the trainer child undoes (train/process.py). No torch here: it must run before torch is imported.

Measured on the 2-core machine (benchmarks/interface/ui_latency.py, gpt2-toy, batch 16 x 64): headless training ran
~19-20k tokens/s with torch's 2 threads. In the app, 2 threads that spin while idle (libgomp's default,
300,000 spins) collapsed to ~7.8k; 1 thread (cores - 1) gave ~10.5k (55%); 2 threads with
OMP_WAIT_POLICY=PASSIVE ~9.6k; 2 threads with a short spin (GOMP_SPINCOUNT=10000) ~15k (75-79%), with
key-to-screen p95 of 25-35 ms. A short spin keeps the hand-off between OpenMP threads fast and still
gives the core back to the UI thread within microseconds. With the engine's LM batch (32 x 128) and 1 Hz
plot redraws the app kept 77-85% of headless (median 80% over 7 runs), p95 14-43 ms.

Those runs trained in a thread of the app, sharing its GIL (a UI thread 8-11% busy cost ~20%). The app now
trains in a child process (tui_lab/train/process.py), which inherits these settings through the
environment; the GIL is no longer shared, only the cores. Measured after the move, on the same 2 cores but
shared with other work (load average 4-7, so both sides swing 2-5x between runs; ui_latency.py now compares
per-step rates, tokens / step_s, on both sides): in-app per-step rates matched or beat the headless runs
that bracket them in every run, before and after the move (the headless side, run with libgomp's default
spin, suffers more from the other load), so on this machine the ratio cannot separate the two designs; the
process removes the GIL cost by construction. Key-to-screen p95 stayed in the same range (48-90 ms under
that load, 25-43 ms measured earlier on a quiet machine).

What lifted the ratio past 0.90 afterwards: the UI thread yields to the trainer (tui_lab/app/priority.py) and
the Train view draws less while a run trains (tui_lab/app/views/train/draw.py). Since the benchmark's headless
side became the in-app run's own trainer process, the UI thread's yield measured no training speed and
slower keys: it is off by default (priority.py says why); drawing less is what keeps the ratio.

How many threads a call runs on is chosen per call for the load now (tui_lab/cpu_threads.py, issue 39):
training no longer takes every core whatever the load.
"""

from __future__ import annotations

import os

SPIN_COUNT = "10000"
SET_BY_US = "TUI_LAB_OPENMP_SET"  # names what the app set; a trainer child drops those (train/process.py)


def configure_openmp() -> None:
    """Call before torch is imported: OpenMP reads these once, when it starts."""
    # libgomp: an explicit spin count bounds ACTIVE waiting; without ACTIVE, measured slower (60%).
    wanted = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": SPIN_COUNT}
    ours = [key for key in wanted if key not in os.environ]
    os.environ.update({key: wanted[key] for key in ours})
    os.environ.setdefault(SET_BY_US, ",".join(ours))

