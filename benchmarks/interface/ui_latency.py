"""Key-to-screen latency while the app trains, and in-app training speed against the same trainer headless.

Drives the real app headless (`App.run_test`) with training running (not paused) on the Train view,
types keys into an Input and times each from the key event to the first screen update that shows it
(the compositor's `_display` call).

The headless side is the in-app run's own trainer without the app: the TrainerSpec the Train view built
(model, tokenizer, batch, threads from tui_lab/openmp.py), in the same child process (TrainerProcess,
started from the spawner thread: the same OpenMP environment and nice value), read the same way. The
last session's baseline was a plain in-process Trainer with the environment's OpenMP settings, which on
the loaded machine trained at 2,100-3,000 tokens/s against ~7,000 for the app's child, so its ratio (1.1-3.4)
measured the baseline, not the app. Rounds are pairs, one in-app run and one headless run back to back,
the order alternating (app first, then headless first, ...), so the load weighs on both sides of a pair
alike; each pair's ratio is in-app / headless, and the median over pairs is the answer. Every pair prints
the 1-minute load average over it; the report names the CPU (/proc/cpuinfo).

The ratio swings with whatever else the cores run; what the app itself takes from training does not:
`app_cpu` is the app process's own CPU seconds per wall second over the measured window (from the first
step after warm-up until the run is stopped, keys included), `app_cpu_threads` the same per thread (the
UI thread, the worker reading the trainer's messages, the queue's threads), `child_cpu` the trainer
process's. `--profile` adds the UI thread's costliest functions (cProfile, which slows what it watches:
read its shares, not the totals).

Priority: the app starts each trainer from its spawner thread, at the app's original priority, and can lower its
UI thread while a run trains (tui_lab/app/priority.py, TUI_LAB_UI_NICE; off by default since it measured slower
keys for no training speed). `--variants 'TUI_LAB_UI_NICE=0;TUI_LAB_UI_NICE=5'` compares settings in one run,
pair by pair (as root, which may raise a thread's priority again between variants).

Both sides compare the same number: the median over steps (after the first WARMUP_STEPS) of each step's
own rate, `tokens / step_s` from its StepEvent (the event's `tokens_per_s` is a running mean since the
first step, docs/CONTRACTS.md, which would carry the warm-up steps along). The in-app run counts the steps
while keys arrive (it is stopped after the last key); the headless run trains all `--steps`.

    .venv/bin/python benchmarks/interface/ui_latency.py [--steps 40] [--keys 60] [--rounds 6] [--profile]

The last line is one JSON object: {"cpu", "load", "ratio", "pairs", "keys_p50_ms", "keys_p95_ms", ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tui_lab.app.priority import spawner_nice, thread_nice  # noqa: E402
from tui_lab.openmp import configure_openmp  # noqa: E402

configure_openmp()  # as `tui-lab` does before torch is imported

from app_under_test import WARMUP_STEPS, AppUnderTest, headless  # noqa: E402, F401 (gpu_check_app reads these here)
from cpu_meter import cpu_name  # noqa: E402

from tui_lab.app.views.train.form import APP_LM  # noqa: E402
from tui_lab.cli.launch import make_app  # noqa: E402


async def rounds(fields: dict, args) -> dict:
    """Pairs of one in-app run and one headless run of the same spec, back to back, the order alternating
    (app then headless, headless then app, ...) so a load that rises or falls through a pair weighs on both
    sides alike. Each pair's ratio compares two runs seconds apart; the median over pairs is the answer (a
    process's own rate swings ~15% from one start to the next on a shared machine: one pair decides nothing).
    With several --variants, pair r runs variant (r // 2) % n: each variant gets both orders in turn."""
    out: dict = {"pairs": [], "latencies": {}, "cpu": []}
    probe = AppUnderTest(make_app(["--preset", "gpt2-toy"]), fields)
    async with probe.app.run_test(size=(120, 40), message_hook=probe.hook) as pilot:
        await probe.open(pilot)
        for r in range(args.rounds):
            variant = args.variants[(r // 2) % len(args.variants)]
            load_before = os.getloadavg()[0]
            pair: dict = {"variant": variant}
            for side in ("app", "headless") if r % 2 == 0 else ("headless", "app"):
                if side == "headless" and not args.app_only:
                    # the spec of the in-app run (the first round runs the app first to have it)
                    rates = await asyncio.to_thread(headless, probe.spec)
                    pair["headless"] = statistics.median(rates) if rates else 0.0
                elif side == "app":
                    if len(args.variants) > 1:
                        apply_variant(variant)
                    latencies, rates, cpu = await probe.run(args.keys, args.watch, args.profile and r == 0)
                    pair |= {"in_app": statistics.median(rates) if rates else 0.0, "ui_nice": thread_nice(),
                             "keys_p50_ms": statistics.median(latencies) if latencies else float("nan")}
                    out["latencies"].setdefault(variant, []).extend(latencies)
                    out["cpu"].append(cpu)
            pair["load"] = round((load_before + os.getloadavg()[0]) / 2, 2)  # the 1-minute load over the pair
            if pair.get("headless"):
                pair["ratio"] = pair["in_app"] / pair["headless"]
            out["pairs"].append(pair)
            ratio = f"{pair['ratio']:.2f}" if "ratio" in pair else "-"
            print(f"round {r + 1}{' [' + variant + ']' if variant else ''}: in app {pair['in_app']:,.0f}, headless "
                  f"{pair.get('headless', 0):,.0f} tokens/s (ratio {ratio}); keys p50 {pair['keys_p50_ms']:.0f} ms; "
                  f"load {pair['load']:.1f}", flush=True)  # a run cut short still says this much
        out["nice"] = {"ui": thread_nice(), "trainer": probe.trainer_nice, "threads": probe.spec.threads}
    return out


def apply_variant(variant: str) -> None:
    """Set a variant's environment (KEY=VALUE, comma-separated) for the next in-app run, and put the UI thread
    back at the trainer's priority so the run's own yield sets it (lowering a nice value needs root: without
    it, variants must come in rising nice order, and the benchmark says so)."""
    for item in filter(None, variant.split(",")):
        key, _, value = item.partition("=")
        os.environ[key.strip()] = value.strip()
    me, base = threading.get_native_id(), spawner_nice()
    if thread_nice(me) != base:
        try:
            os.setpriority(os.PRIO_PROCESS, me, base)
        except OSError:
            sys.exit("--variants with a lower UI nice value after a higher one needs root (an unprivileged thread "
                     "cannot raise its priority again): order the variants by rising nice, or run one at a time")


def _print_cpu(cpu: dict) -> None:
    for name, window in cpu.items():
        print(f"app CPU while {name}: {window['app_cpu']:.1%} of a core over {window['window_s']} s and "
              f"{window['steps']} steps ({window['app_cpu_ms_per_step']} ms a step); trainer process "
              f"{window['child_cpu']:.0%}; by thread: "
              + ", ".join(f"{k} {v:.1%}" for k, v in window["app_cpu_threads"].items()))


def _quantile(values: list[float], q: int) -> float:
    """The q-th percentile (inclusive method), nan for fewer than two values."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) >= 2 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--keys", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=6, help="pairs of one in-app and one headless run")
    parser.add_argument("--watch", type=float, default=0.0,
                        help="seconds of training on screen with nobody typing, measured before the keys")
    parser.add_argument("--batch-size", type=int, default=APP_LM["batch_size"])
    parser.add_argument("--seq-len", type=int, default=APP_LM["seq_len"],
                        help="with --batch-size: small steps come fast, so the app's cost per step shows")
    parser.add_argument("--app-only", action="store_true", help="skip the headless runs (the app's CPU only)")
    parser.add_argument("--profile", action="store_true", help="the UI thread's costliest functions (cProfile)")
    parser.add_argument("--variants", default="", type=lambda text: text.split(";"),
                        help="environments compared in one run, ';' between variants, ',' between KEY=VALUE "
                             "(e.g. 'TUI_LAB_UI_NICE=5;TUI_LAB_UI_NICE=0'): pair r runs variant (r // 2) %% n")
    args = parser.parse_args()
    fields = {k: APP_LM[k] for k in ("lr", "schedule")} | {
        "batch_size": args.batch_size, "seq_len": args.seq_len, "steps": args.steps, "eval_every": 0, "sample_every": 0}
    cpu = cpu_name()
    print(f"CPU: {cpu}, {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    out = asyncio.run(rounds(fields, args))
    for r, window in enumerate(out["cpu"]):
        if "profile" in window:
            print(window.pop("profile"))
        print(f"-- round {r + 1}")
        _print_cpu(window)
    pairs = out["pairs"]
    loads = [p["load"] for p in pairs]
    result = {"cpu": cpu, "cores": os.cpu_count(), "rounds": args.rounds,
              "load": {"median": statistics.median(loads), "min": min(loads), "max": max(loads)},
              "nice": out["nice"], "pairs": [{k: round(v, 3) if isinstance(v, float) else v for k, v in p.items()}
                                             for p in pairs], "app_cpu": out["cpu"], "variants": {}}
    print(f"trainer nice {out['nice']['trainer']}, threads {out['nice']['threads']}; load average over the pairs: "
          f"median {statistics.median(loads):.1f} (min {min(loads):.1f}, max {max(loads):.1f})")
    for variant in args.variants:
        result["variants"][variant] = summary = summarize(variant, pairs, out["latencies"].get(variant, []))
        print(f"{variant or 'as configured'}: " + "; ".join(f"{k} {v}" for k, v in summary.items()))
    if len(args.variants) == 1:
        result |= result["variants"][args.variants[0]]
    print(json.dumps(result))


def summarize(variant: str, pairs: list[dict], latencies: list[float]) -> dict:
    """One variant's numbers: the median in-app / headless ratio over its pairs, and its keys' p50 / p95."""
    ratios = [p["ratio"] for p in pairs if p["variant"] == variant and "ratio" in p]
    out: dict = {"keys": len(latencies), "ui_nice": [p["ui_nice"] for p in pairs if p["variant"] == variant][-1]}
    if latencies:
        out |= {"keys_p50_ms": round(statistics.median(latencies), 1),
                "keys_p95_ms": round(_quantile(latencies, 95), 1), "keys_max_ms": round(max(latencies), 1)}
    if ratios:
        out |= {"ratio": round(statistics.median(ratios), 3), "ratios": [round(q, 3) for q in ratios]}
    return out

if __name__ == "__main__":
    main()
