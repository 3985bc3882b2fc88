"""What a Pilot app test pays for each launch and each pause, in CPU seconds (not wall: a shared machine's load
moves wall time, not the work done).

Launches bare `tui-lab` with Pilot as the app tests do (tests/support/app_support.py), waits for its live
model, then times `pilot.pause()` and `pilot.pause(0.05)` (a `wait_for` poll). `--textual` runs it with Textual's
own Pilot wait instead of the one tests/conftest.py installs (the CSS cache and gc tuning stay in both), to
compare. Prints each launch and the pauses' means, and last one JSON object.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/pilot_cost.py [--launches 4] [--pauses 40] [--textual]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "support")]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def launch(pauses: int) -> tuple[float, float, float]:
    from app_support import SIZE, app_for, wait_for

    start = cpu()
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.live.generation >= 1 and not app.live.building, timeout=600)
        launched = cpu() - start
        await pilot.pause(1)
        costs = []
        for pause in (pilot.pause, lambda: pilot.pause(0.05)):
            start = cpu()
            for _ in range(pauses):
                await pause()
            costs.append((cpu() - start) / pauses)
    return launched, costs[0], costs[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--launches", type=int, default=4)
    p.add_argument("--pauses", type=int, default=40)
    p.add_argument("--textual", action="store_true", help="Textual's own Pilot wait, not the tests' one")
    args = p.parse_args()
    from textual.pilot import Pilot

    textual_wait = Pilot._wait_for_screen
    import conftest  # noqa: F401  the tests' process: CSS cache, gc tuning, Pilot's cheaper wait

    if args.textual:
        Pilot._wait_for_screen = textual_wait
    asyncio.run(launch(1))  # the imports and the first model build, which a test session pays once
    gc.collect()
    gc.freeze()
    rows = []
    for i in range(args.launches):
        rows.append(asyncio.run(launch(args.pauses)))
        print(f"launch {i + 1}: {rows[-1][0]:.2f} s CPU to the live model; pause() {rows[-1][1] * 1e3:.1f} ms, "
              f"pause(0.05) {rows[-1][2] * 1e3:.1f} ms CPU", flush=True)
    mean = [sum(row[k] for row in rows) / len(rows) for k in range(3)]
    print(json.dumps({"wait": "textual" if args.textual else "tests", "launch_cpu_s": round(mean[0], 3),
                      "pause_cpu_ms": round(mean[1] * 1e3, 2), "poll_cpu_ms": round(mean[2] * 1e3, 2)}))


if __name__ == "__main__":
    main()
