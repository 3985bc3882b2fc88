"""What the crawler's CI tier costs (tests/support/crawler.py): one crawl of bare `tui-lab` (or the given argv) with
Pilot, as tests/app/shell/test_crawl.py runs it, and its counts: states, keys, screen looks, per-view bindings
pressed, wall and CPU seconds (CPU is what a shared machine's load does not move). Prints the summary, the load
average, and last one JSON object.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/crawl_cost.py [--budget 170] [--depth 2] [--walk 300]
        [--size 80x24] [--seed 11] [-- ARGV...]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "support")]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def crawl(args) -> dict:
    from crawler import Crawler

    width, height = (int(n) for n in args.size.split("x"))
    crawler = Crawler(args.argv, (width, height), depth=args.depth, walk_keys=args.walk, seed=args.seed,
                      budget_s=args.budget)
    start, cpu0 = time.monotonic(), cpu()
    report = await crawler.run()
    wall, spent = time.monotonic() - start, cpu() - cpu0
    print(report.summary())
    for failure in report.failures:
        print(failure)
    return {"states": len(report.states), "keys": report.keys, "looks": report.renders, "wall_s": round(wall, 1),
            "cpu_s": round(spent, 1), "keys_cpu_s": round(report.cpu_seconds, 1), "failures": len(report.failures),
            "coverage": report.coverage, "cut_short": report.cut_short, "load": os.getloadavg()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=None, help="seconds of keys (default: none, the whole crawl)")
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--walk", type=int, default=300)
    p.add_argument("--size", default="80x24")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("argv", nargs="*")
    args = p.parse_args()
    import conftest  # noqa: F401  the tests' process: CSS cache, gc tuning, Pilot's cheaper wait

    gc.collect()
    gc.freeze()
    os.chdir(tempfile.mkdtemp(prefix="crawl-cost-"))  # what a key saves (a run, JSON, CSV) lands here
    print(json.dumps(asyncio.run(crawl(args))))


if __name__ == "__main__":  # the trainer's processes start by spawn: they import this module again
    main()
