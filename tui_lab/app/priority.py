"""While a run trains, the UI thread yields the cores to the trainer process.

On 2 cores the trainer's two OpenMP threads stall together whenever the UI thread takes one core (the
other waits at the next barrier), so ~10% of a core of UI work cost the trainer 10-15% of its speed
(benchmarks/ui_latency.py). With the UI thread UI_NICE levels below the trainer, the trainer keeps its
cores and the UI thread runs mostly in their gaps (the trainer's single-threaded Python between ops).
Measured on a 2-core Intel Xeon (AVX-512; in-app / headless tokens/s, median over rounds, key-to-screen
p95): neither lever alone reaches 0.90 reliably. Nice 5 with the old drawing 0.91 (p95 40 ms), nice 7 0.92
(p95 49 ms; nice 10, on a 2-core AMD machine earlier, 0.93-0.96 at p95 80 ms, over the 50 ms target); the
Train view drawing less while a run trains (tui_lab/app/views/train/draw.py) at nice 0: 0.90 over 10 rounds
(p95 35 ms). Both together, nice 5: 0.92-0.96 in three runs of 10 rounds (p95 37-42 ms).

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

UI_NICE = 5  # nice levels the UI thread drops below the trainer (TUI_LAB_UI_NICE overrides; 0 turns it off)

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
