"""A storm of view keys: 600 mixed F-keys posted at once into the real app (headless, `App.run_test`), then how
long until the app is idle again, the view shown, and the process's CPU and memory before, right after and for
`--watch` seconds after (issue 24: the storm once left the app at 100% of a core on an idle view, memory growing
370 MB -> 1 GB, and a view switch sent later took 65 s to show).

Also a resize storm: the terminal resized to 40x12 and back `--resizes` times, then the time until a view switch
sent after it shows.

    .venv/bin/python benchmarks/interface/key_storm.py [--keys 600] [--watch 30] [--train]

The last line is one JSON object: {"keys", "settle_s", "last_view_ok", "cpu_after" (CPU s per wall s over the
watch), "rss_before_mb", "rss_after_mb", "rss_end_mb", "rss_growth_watch_mb", "switch_after_s", ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tui_lab.openmp import configure_openmp  # noqa: E402

configure_openmp()  # as `tui-lab` does before torch is imported

from textual import events  # noqa: E402
from textual.widgets import TabbedContent  # noqa: E402

from tui_lab.app.app import VIEWS  # noqa: E402
from tui_lab.cli.launch import make_app  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def queued(app) -> int:
    nodes = [app, *app.screen_stack, *app.screen.walk_children()]
    return sum(node._message_queue.qsize() for node in nodes)


async def settle(pilot, app, timeout: float) -> float:
    start = time.perf_counter()
    while queued(app) and time.perf_counter() - start < timeout:
        await pilot.pause(0.01)
    return time.perf_counter() - start


async def measure(args: argparse.Namespace) -> dict:
    app = make_app(["--preset", "gpt2-toy"] + (["--train"] if args.train else []))
    result: dict = {"keys": args.keys, "train": args.train}
    async with app.run_test(size=(100, 30)) as pilot:
        while app.live.model is None or app.live.building:
            await pilot.pause(0.1)
        for spec in VIEWS:  # every view mounted once, so the storm measures switching, not first builds
            app.show_view(spec.id)
            await pilot.pause(0.2)
        await pilot.pause(2.0)
        result["rss_before_mb"] = round(rss_mb(), 1)
        rng = random.Random(24)
        keys = [f"f{rng.randint(1, len(VIEWS))}" for _ in range(args.keys)]
        start = time.perf_counter()
        for key in keys:
            app.post_message(events.Key(key, None))
        result["post_s"] = round(time.perf_counter() - start, 3)
        result["settle_s"] = round(await settle(pilot, app, 600) + result["post_s"], 2)
        await pilot.pause(0.3)
        want = VIEWS[int(keys[-1][1:]) - 1].id
        result["last_view_ok"] = app.query_one("#views", TabbedContent).active == want
        result["rss_after_mb"] = round(rss_mb(), 1)
        cpu0, wall0, rss_samples = cpu_s(), time.perf_counter(), []
        while time.perf_counter() - wall0 < args.watch:
            await asyncio.sleep(1.0)
            rss_samples.append(rss_mb())
        result["cpu_after"] = round((cpu_s() - cpu0) / (time.perf_counter() - wall0), 3)
        result["rss_end_mb"] = round(rss_samples[-1], 1)
        result["rss_growth_watch_mb"] = round(max(rss_samples) - min(rss_samples), 1)
        # a view key sent after the storm: how long until it shows
        other = next(spec.id for spec in VIEWS if spec.id != want)
        index = [spec.id for spec in VIEWS].index(other) + 1
        start = time.perf_counter()
        app.post_message(events.Key(f"f{index}", None))
        while app.query_one("#views", TabbedContent).active != other:
            await pilot.pause(0.005)
        result["switch_after_s"] = round(time.perf_counter() - start, 3)
        # a resize storm, then a switch
        for _ in range(args.resizes):
            await pilot.resize_terminal(40, 12)
            await pilot.resize_terminal(100, 30)
        target = VIEWS[0] if other != VIEWS[0].id else VIEWS[1]
        start = time.perf_counter()
        app.post_message(events.Key(f"f{VIEWS.index(target) + 1}", None))
        while app.query_one("#views", TabbedContent).active != target.id:
            await pilot.pause(0.005)
        result["switch_after_resizes_s"] = round(time.perf_counter() - start, 3)
        result["resizes"] = args.resizes
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=600)
    parser.add_argument("--watch", type=float, default=30.0, help="seconds of CPU and memory watched after the storm")
    parser.add_argument("--resizes", type=int, default=20)
    parser.add_argument("--train", action="store_true", help="with a training run going on the Train view")
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    for key, value in result.items():
        print(f"{key:>24}: {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
