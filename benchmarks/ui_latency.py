"""Key-to-screen latency while the app trains, and in-app training speed vs the headless engine.

Drives the real app headless (`App.run_test`) with training running (not paused) on the Train view,
types keys into an Input and times each from the key event to the first screen update that shows it
(the compositor's `_display` call). The same TrainConfig runs headless in a subprocess before and after
each in-app run, `--rounds` times in one app (headless, app, headless, app, ..., headless): each in-app
run is compared with the two headless runs beside it, and the median over rounds is the ratio. The last
line is one JSON object: {"ratio", "ratios", "p95_ms", "in_app_tokens_per_s", "headless_tokens_per_s", ...}.

The ratio swings with whatever else the cores run; what the app itself takes from training does not:
`app_cpu` is the app process's own CPU seconds per wall second over the measured window (from the first
step after warm-up until the run is stopped, keys included), `app_cpu_threads` the same per thread (the
UI thread, the worker reading the trainer's messages, the queue's threads), `child_cpu` the trainer
process's. `--profile` adds the UI thread's costliest functions (cProfile, which slows what it watches:
read its shares, not the totals).

Priority: the app lowers its UI thread while a run trains (tui_lab/app/priority.py; `TUI_LAB_UI_NICE=0` turns it
off, for comparison) and starts each trainer from its spawner thread, kept at the original priority; the headless
runs start from that thread too, so both sides train at the same nice value (the report prints both).

Both sides compare the same number: the median over steps (after the first WARMUP_STEPS) of each step's
own rate, `tokens / step_s` from its StepEvent (the event's `tokens_per_s` is a running mean since the
first step, docs/CONTRACTS.md, which would carry the warm-up steps along).

    .venv/bin/python benchmarks/ui_latency.py [--steps 40] [--keys 60] [--rounds 3] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_lab.app.priority import spawn, thread_nice  # noqa: E402
from tui_lab.openmp import configure_openmp, train_threads  # noqa: E402

configure_openmp()  # as `tui-lab` does before torch is imported

from textual import events  # noqa: E402

from tui_lab.app.modals.confirm_run import ConfirmLongRun  # noqa: E402
from tui_lab.app.views.train.form import APP_LM  # noqa: E402
from tui_lab.cli.launch import make_app  # noqa: E402

WARMUP_STEPS = 3
HEADLESS = """
import json, statistics, sys
from tui_lab import load_preset
from tui_lab.train import Trainer, train_config_for
fields = json.loads(sys.argv[1])
trainer = Trainer(load_preset("gpt2-toy"), train_config_for(None, **fields), device=sys.argv[2])
rates = [(e.tokens / e.step_s) for e in (trainer.step() for _ in range(fields["steps"]))]
print(json.dumps({"tokens_per_s": statistics.median(rates[WARMUP:])}))
""".replace("WARMUP", str(WARMUP_STEPS))


def headless(fields: dict, threads: int | None = None, device: str = "cpu") -> float:
    """The engine alone in a fresh process on `device`: torch's default threads (what `tui-lab train` does),
    or `threads`."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", HEADLESS, json.dumps(fields), device], capture_output=True, text=True,
                         check=True, env=env, cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])["tokens_per_s"]


TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process so far, by thread name (/proc: Linux only)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        name = names.get(int(task.name), "other")
        if name.startswith(("QueueFeederThread", "Thread-")) or name == "other":
            name = "other (queue threads, OpenMP, ...)"
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
    return out


def process_cpu(pid: int) -> float:
    """CPU seconds of another process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


class CpuWindow:
    """The app's CPU per wall second (whole process, each thread) and the trainer child's, between two marks."""

    def __init__(self, child_pid: int, profile: bool) -> None:
        self.child_pid = child_pid
        # CPU time of the UI thread, not wall time: on a shared machine waiting for a core is not a cost
        self.profiler = cProfile.Profile(time.thread_time) if profile else None

    def begin(self) -> None:
        self.wall, self.cpu, self.threads = time.perf_counter(), time.process_time(), thread_cpu()
        self.child = process_cpu(self.child_pid)
        if self.profiler:
            self.profiler.enable()  # the UI thread only: cProfile follows the thread that enabled it

    def end(self, steps: int) -> dict:
        if self.profiler:
            self.profiler.disable()
        wall = time.perf_counter() - self.wall
        cpu, threads, child = time.process_time() - self.cpu, thread_cpu(), process_cpu(self.child_pid) - self.child
        by_thread = {k: round((v - self.threads.get(k, 0.0)) / wall, 3) for k, v in threads.items()}
        return {"app_cpu": round(cpu / wall, 3), "child_cpu": round(child / wall, 3), "window_s": round(wall, 1),
                "steps": steps, "app_cpu_ms_per_step": round(1000 * cpu / steps, 1) if steps else None,
                "app_cpu_threads": {k: v for k, v in sorted(by_thread.items(), key=lambda kv: -kv[1]) if v}}

    def report(self, top: int = 25) -> str:
        out = io.StringIO()
        pstats.Stats(self.profiler, stream=out).sort_stats("tottime").print_stats(top)
        pstats.Stats(self.profiler, stream=out).sort_stats("cumulative").print_stats(top)
        return out.getvalue()


class AppUnderTest:
    """One app on the Train view for every round: each round starts a run, watches, types, stops it."""

    def __init__(self, app, fields: dict) -> None:
        self.app, self.fields = app, fields
        self.painted: list[tuple[float, int]] = []  # (time, length of the typed text when the screen was updated)
        self.steps: list = []  # the step events of the run in progress
        self.shown = asyncio.Event()
        self.wanted = 0
        self.trainer_nice: int | None = None

    def hook(self, message) -> None:
        event = getattr(message, "said", None)
        if type(message).__name__ == "RunSaid" and getattr(event, "kind", "") == "step" and \
                all(e.step != event.step for e in self.steps[-3:]):  # the hook sees a message at each hop
            self.steps.append(event)

    async def open(self, pilot) -> None:
        app = self.app
        while not app.query("#view-train"):
            await pilot.pause(0.05)
        app.show_view("train")
        await pilot.pause()
        self.view = app.view("train")
        for name, value in self.fields.items():
            inputs = app.query(f"#tf-{name}")
            if inputs:
                inputs.first().value = str(value)
        self.box = app.query_one("#tf-folder")
        display = app._display

        def spy(screen, renderable):  # the compositor hands a frame to the terminal
            if renderable is not None:
                self.painted.append((time.perf_counter(), len(self.box.value)))
                if self.wanted and len(self.box.value) >= self.wanted:
                    self.shown.set()  # wakes the typist without polling (polling would hold the GIL)
            return display(screen, renderable)

        app._display = spy

    async def run(self, keys: int, watch: float, profile: bool) -> tuple[list, list, dict]:
        """(key-to-screen latencies in ms, per-step tokens/s, the app's CPU) for one run: `watch` seconds with
        nobody typing (the "watching" window), then `keys` keys (the "typing" window)."""
        app, view = self.app, self.view
        self.steps = []
        self.box.focus()
        view.action_start()
        while len(self.steps) < WARMUP_STEPS:
            if isinstance(app.screen, ConfirmLongRun):  # a long --steps on a slow (or busy) machine asks first
                app.screen.dismiss(True)
            await asyncio.sleep(0.1)
        pid = view.session.process._process.pid  # noqa: SLF001 - the trainer child, for its CPU
        self.trainer_nice = os.getpriority(os.PRIO_PROCESS, pid)
        cpu, windows = {}, {}
        if watch > 0:  # the run on screen, nobody typing: what displaying the run costs
            window = windows["watching"] = CpuWindow(pid, profile)
            first = len(self.steps)
            window.begin()
            await asyncio.sleep(watch)
            cpu["watching"] = window.end(len(self.steps) - first)
        if keys:
            window = windows["typing"] = CpuWindow(pid, profile)
            first = len(self.steps)
            window.begin()
        latencies = await self._type(keys)
        rates = [e.tokens / e.step_s for e in self.steps if e.step > WARMUP_STEPS]
        if keys:
            cpu["typing"] = window.end(len(self.steps) - first)
        if profile:
            cpu["profile"] = "\n".join(f"== while {name} ==\n{w.report()}" for name, w in windows.items())
        view.action_stop()
        while view.training:
            await asyncio.sleep(0.1)
        app.set_focus(None)  # idle between rounds: no cursor blinking while the headless run measures
        return latencies, rates, cpu

    async def _type(self, keys: int) -> list[float]:
        self.box.value = ""  # an Input selects its text when focused: the first key would replace it, not add
        latencies = []
        for i in range(keys):
            if self.view.session.ended:
                break
            want, sent = len(self.box.value) + 1, time.perf_counter()
            self.wanted = want
            self.shown.clear()
            self.app._driver.send_message(events.Key("a", "a"))
            await asyncio.wait_for(self.shown.wait(), timeout=10)
            self.wanted = 0
            shown = next(t for t, n in self.painted if t >= sent and n >= want)
            latencies.append((shown - sent) * 1000)
            await asyncio.sleep(0.05 + 0.1 * (i % 3))  # a person types irregularly
        return latencies


async def rounds(fields: dict, args) -> dict:
    """Headless, in app, headless, in app, ..., headless: each in-app run is compared with the two headless
    runs beside it (a process's own rate swings ~15% from one start to the next on this machine, so one
    pair decides nothing: the median over rounds does)."""
    out = {"headless": [], "in_app": [], "latencies": [], "cpu": []}
    probe = AppUnderTest(make_app(["--preset", "gpt2-toy"]), fields)
    async with probe.app.run_test(size=(120, 40), message_hook=probe.hook) as pilot:
        await probe.open(pilot)
        for r in range(args.rounds):
            if not args.app_only:
                out["headless"].append(await asyncio.to_thread(spawn, lambda: headless(fields)))
            latencies, rates, cpu = await probe.run(args.keys, args.watch, args.profile and r == 0)
            out["latencies"] += latencies
            out["in_app"].append(statistics.median(rates) if rates else 0.0)
            out["cpu"].append(cpu)
            before = out["headless"][-1] if out["headless"] else 0.0
            p50 = statistics.median(latencies) if latencies else float("nan")
            print(f"round {r + 1}: headless before {before:,.0f}, in app {out['in_app'][-1]:,.0f} tokens/s; keys p50 "
                  f"{p50:.0f} ms; load {os.getloadavg()[0]:.1f}", flush=True)  # a run cut short still says this much
        if not args.app_only:
            out["headless"].append(await asyncio.to_thread(spawn, lambda: headless(fields)))
            out["headless_same_threads"] = await asyncio.to_thread(spawn, lambda: headless(fields, train_threads()))
        out["nice"] = {"ui": thread_nice(), "trainer": probe.trainer_nice}
    return out


def _print_cpu(cpu: dict) -> None:
    for name, window in cpu.items():
        print(f"app CPU while {name}: {window['app_cpu']:.1%} of a core over {window['window_s']} s and "
              f"{window['steps']} steps ({window['app_cpu_ms_per_step']} ms a step); trainer process "
              f"{window['child_cpu']:.0%}; by thread: "
              + ", ".join(f"{k} {v:.1%}" for k, v in window["app_cpu_threads"].items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--keys", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3, help="in-app runs, each between two headless runs")
    parser.add_argument("--watch", type=float, default=0.0,
                        help="seconds of training on screen with nobody typing, measured before the keys")
    parser.add_argument("--batch-size", type=int, default=APP_LM["batch_size"])
    parser.add_argument("--seq-len", type=int, default=APP_LM["seq_len"],
                        help="with --batch-size: small steps come fast, so the app's cost per step shows")
    parser.add_argument("--app-only", action="store_true", help="skip the headless runs (the app's CPU only)")
    parser.add_argument("--profile", action="store_true", help="the UI thread's costliest functions (cProfile)")
    args = parser.parse_args()
    fields = {k: APP_LM[k] for k in ("lr", "schedule")} | {
        "batch_size": args.batch_size, "seq_len": args.seq_len, "steps": args.steps, "eval_every": 0, "sample_every": 0}
    load = os.getloadavg()
    out = asyncio.run(rounds(fields, args))
    for r, cpu in enumerate(out["cpu"]):
        if "profile" in cpu:
            print(cpu.pop("profile"))
        print(f"-- round {r + 1}")
        _print_cpu(cpu)
    result = {"keys": len(out["latencies"]), "load_1min": round(load[0], 2), "rounds": args.rounds,
              "cpu": out["cpu"]}
    print(f"load average {load[0]:.2f} (cores {os.cpu_count()}); nice: UI thread {out['nice']['ui']}, "
          f"trainer {out['nice']['trainer']}")
    result["nice"] = out["nice"]
    latencies = out["latencies"]
    if latencies:
        p95 = statistics.quantiles(latencies, n=20, method="inclusive")[-1] if len(latencies) >= 2 else float("nan")
        print(f"keys {len(latencies)}, median {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms, "
              f"max {max(latencies):.1f} ms")
        result["p95_ms"] = round(p95, 1)
    inside = out["in_app"]
    result["in_app_tokens_per_s"] = [round(x, 1) for x in inside]
    if not args.app_only:
        head = out["headless"]
        ratios = [x / ((head[r] + head[r + 1]) / 2) for r, x in enumerate(inside)]
        for r, x in enumerate(inside):
            print(f"round {r + 1}: in app {x:,.0f} tokens/s (median step), headless {head[r]:,.0f} before and "
                  f"{head[r + 1]:,.0f} after: {ratios[r]:.0%}")
        print(f"in app / headless: median {statistics.median(ratios):.0%} over {len(ratios)} rounds "
              f"({', '.join(f'{q:.2f}' for q in ratios)}); headless with the app's {train_threads()} thread(s): "
              f"{out['headless_same_threads']:,.0f}")
        result |= {"headless_tokens_per_s": [round(h, 1) for h in head], "ratios": [round(q, 3) for q in ratios],
                   "ratio": round(statistics.median(ratios), 3),
                   "headless_same_threads_tokens_per_s": round(out["headless_same_threads"], 1)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
