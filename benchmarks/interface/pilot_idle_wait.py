"""What Pilot's idle wait costs a key typed while a worker thread is busy: Textual's (the process's CPU, every
thread's) against the tests' (tests/conftest.py: the CPU of the event loop's thread only).

Each `pilot.press(key)` waits twice, and `pilot.pause()` once, for 20 ms sleeps until one passes with under 1 ms of
CPU (at most 1 s). A worker thread (here: hashing, which leaves the GIL as a model's torch ops do) keeps the
process's CPU moving, so Textual's wait runs its full second. Types KEYS keys into an Input, idle and beside the
busy thread, with each wait; prints seconds per key (wall, and the event loop thread's CPU) and one JSON line.
Wall time moves with the machine's load; the busy/idle ratio with Textual's wait is what this shows.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/pilot_idle_wait.py [--keys 10]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "support")]


def busy(stop: threading.Event) -> None:
    block = b"x" * (1 << 20)
    while not stop.is_set():
        hashlib.sha256(block).digest()  # releases the GIL, as torch's kernels do


async def type_keys(keys: int, with_busy_thread: bool) -> tuple[float, float]:
    from textual.app import App
    from textual.widgets import Input

    class Typing(App):
        def compose(self):
            yield Input(id="box")

    app = Typing()
    stop = threading.Event()
    async with app.run_test() as pilot:
        app.query_one(Input).focus()
        await pilot.pause()
        worker = threading.Thread(target=busy, args=(stop,), daemon=True)
        if with_busy_thread:
            worker.start()
        start, cpu = time.perf_counter(), time.thread_time()
        for _ in range(keys):
            await pilot.press("a")
        wall, used = time.perf_counter() - start, time.thread_time() - cpu
        stop.set()
        if with_busy_thread:
            worker.join()
        assert app.query_one(Input).value == "a" * keys
    return wall / keys, used / keys


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=10)
    args = p.parse_args()
    import textual.app as textual_app
    import textual.pilot as textual_pilot

    textual_wait = textual_app.wait_for_idle
    import conftest  # noqa: F401  the tests' process: their idle wait replaces Textual's

    tests_wait = textual_app.wait_for_idle
    out = {}
    for name, wait in (("textual", textual_wait), ("tests", tests_wait)):
        textual_app.wait_for_idle = textual_pilot.wait_for_idle = wait
        for label, with_busy in (("idle", False), ("busy_thread", True)):
            wall, cpu = asyncio.run(type_keys(args.keys, with_busy))
            out[f"{name}_{label}_s_per_key"] = round(wall, 3)
            print(f"{name} wait, {label.replace('_', ' ')}: {wall * 1e3:.0f} ms a key on the wall clock, "
                  f"{cpu * 1e3:.1f} ms of the loop thread's CPU", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
