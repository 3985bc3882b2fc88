"""While a run trains, the UI thread may yield the cores to the trainer process (off by default: UI_NICE).

On 2 cores the trainer's two OpenMP threads stall together whenever the UI thread takes one core (the
other waits at the next barrier), so ~10% of a core of UI work cost the trainer 10-15% of its speed
(benchmarks/interface/ui_latency.py). With the UI thread UI_NICE levels below the trainer, the trainer keeps its
cores and the UI thread runs mostly in their gaps (the trainer's single-threaded Python between ops).
Measured on a 2-core Intel Xeon (AVX-512) against the old baseline (a plain in-process Trainer, fair only
on a quiet machine): nice 5 with the Train view drawing less while a run trains
(tui_lab/app/views/train/draw.py) 0.92-0.96 (p95 37-42 ms); drawing less at nice 0: 0.90 (p95 35 ms).

Why it is off now: the app is one autogroup (Linux groups a terminal session's processes and shares the
cores fairly between groups), so a lowered UI thread yields only to its own trainer, and each key's echo
waits behind the trainer's threads. With the benchmark's baseline fixed (the in-app run's own trainer
process, headless, pair by pair) on the same 2-core Xeon (AVX-512, AMX) shared with other work at load
11-17, one run with both settings (4 pairs each, 40 keys a pair): nice 5 in-app / headless 0.95, keys p50
66 ms, p95 155 ms; nice 0 1.04, p50 30 ms, p95 78 ms. The training speed did not move (the UI thread takes
3-4% of a core while keys arrive; drawing less, draw.py, is what keeps it that low) and the keys came twice
as fast. Again at load 8-15 (4 pairs each): nice 0 0.94, p95 56 ms; nice 5 0.955, p95 98 ms; and at load
7 (2 pairs each): nice 0 0.85, p95 42 ms; nice 5 0.82, p95 74 ms. A short EEVDF slice request for the UI
thread (sched_setattr, Linux 6.12+) was tried too, at nice 5 and at nice 0: no faster keys, no better ratio.

TUI_LAB_UI_NICE=5 brings the old behaviour back (for comparison: `ui_latency.py --variants`).

Linux raises a thread's nice value for that thread alone, but an unprivileged process can never lower it
again, and a thread or child process inherits the nice value of the thread that creates it. So the
trainer process is started from the spawner, a thread created before the UI thread is lowered: every
run's trainer starts at the app's original priority, however often the UI thread has yielded since.
Elsewhere (macOS, Windows) nothing changes: those kernels have no per-thread nice value.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

UI_NICE = 0  # nice levels the UI thread drops below the trainer (TUI_LAB_UI_NICE overrides; 0: it does not)

_spawner: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def ui_nice() -> int:
    override = os.environ.get("TUI_LAB_UI_NICE", "")
    return int(override) if override.isdigit() else UI_NICE


def supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "setpriority")


def thread_nice(native_id: int | None = None) -> int:
    """The nice value of a thread of this process (Linux), or of this process elsewhere."""
    if not supported():
        return os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0
    return os.getpriority(os.PRIO_PROCESS, native_id or threading.get_native_id())


def spawner() -> ThreadPoolExecutor:
    """The one thread that starts trainer processes, created at the caller's priority on first use.

    Call it first from the UI thread before that thread yields (`yield_to_training` does)."""
    global _spawner
    with _lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tui-lab spawner")
            _spawner.submit(lambda: None).result()  # the thread exists now, at this thread's priority
        return _spawner


def spawn(start: Callable[[], Any]) -> Any:
    """Run `start` (which starts a child process) on the spawner thread and return its result."""
    return spawner().submit(start).result()


def yield_to_training() -> int:
    """From the UI thread, as a run starts: lower it to UI_NICE below the spawner. Its new nice value.

    Idempotent: a thread already lowered stays where it is (it cannot climb back to drop again)."""
    spawner()
    if not supported() or ui_nice() <= 0:
        return thread_nice()
    base = spawner_nice()
    target = min(19, base + ui_nice())
    me = threading.get_native_id()
    if thread_nice(me) < target:
        try:
            os.setpriority(os.PRIO_PROCESS, me, target)
        except OSError:
            pass  # a sandbox may refuse: the run trains, only a little slower
    return thread_nice(me)


def spawner_nice() -> int:
    """The priority every trainer starts at: the spawner thread's."""
    return spawn(thread_nice)
