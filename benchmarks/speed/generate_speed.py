"""Cached vs uncached greedy generation on both toy presets (target: >= 3x at the longest length, same tokens).

The presets are used as they ship: the lengths default to `default_lengths(config, prompt_len)`, which fit
the model's max_len (gpt2-toy's 256 learned positions after a 16-token prompt: 64 128 240; the 2017 toy's
sinusoidal positions: 64 128 256), so the longest length measures the cache and not the sliding window. A
length that slides anyway (`--new-tokens 256`) is flagged. Each path runs on the thread count the core's
policy chooses for it (`tui_lab.generation.threads`); the reference column reruns everything in a child
process started with OMP_NUM_THREADS=1. Random weights: speed does not depend on them. Last line: JSON.

    python benchmarks/speed/generate_speed.py [--new-tokens 64 240] [--prompt-len 16] [--repeats 3] [--no-reference]
"""

from __future__ import annotations

import argparse
import json
import os

import torch
from one_thread import add_reference_options, machine_line, reference_argv, rerun_with_one_thread

from tui_lab import build_model, load_preset
from tui_lab.bench.kv_speed import compare_generation

PRESETS = ("gpt2-toy", "transformer-2017-toy")
TARGET_SPEEDUP = 3.0


def measure(args: argparse.Namespace) -> dict:
    """{preset: report dict} for every preset, on the policy's thread counts."""
    reports = {}
    for preset in PRESETS:
        torch.manual_seed(0)
        model = build_model(load_preset(preset), device=args.device)
        lengths = tuple(args.new_tokens) if args.new_tokens else None
        report = compare_generation(model, prompt_len=args.prompt_len, new_tokens=lengths,
                                    repeats=args.repeats).to_dict()
        for run in report["runs"]:  # per-token latencies: for the app's plot, too long for a JSON line
            del run["cached_step_s"], run["uncached_step_s"]
        reports[preset] = report
    return reports


def reference(argv: list[str]) -> dict:
    """The same measurement in a child process whose OpenMP starts with one thread."""
    return rerun_with_one_thread(__file__, argv)


def print_report(preset: str, report: dict, ref: dict | None) -> None:
    threads = report["threads"]
    print(f"{preset} on {report['device']}, prompt {report['prompt_len']}, median of {report['repeats']}, "
          f"threads cached {threads['cached']} / uncached {threads['uncached']}, max_len {report['max_len']}:")
    print(f"  {'new':>9} {'cached s':>9} {'uncached s':>10} {'cached tok/s':>12} {'speedup':>8} identical"
          + ("  OMP=1: cached s, uncached s, speedup" if ref else ""))
    for i, run in enumerate(report["runs"]):
        new = f"{run['new_tokens']}{' slid' if run['slid'] else ''}"
        line = (f"  {new:>9} {run['cached_s']:>9.3f} {run['uncached_s']:>10.3f} {run['cached_tokens_per_s']:>12.0f} "
                f"{run['speedup']:>7.2f}x {run['identical']!s:>9}")
        if ref:
            r = ref["runs"][i]
            line += f"  {r['cached_s']:>15.3f} {r['uncached_s']:>11.3f} {r['speedup']:>8.2f}x"
        print(line)
    for note in report["notes"]:
        print(f"  slid: {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, nargs="+", default=None,
                        help="lengths (default: 64 128 256, the longest cut to fit each preset's max_len)")
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    add_reference_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args)))
        return
    load = os.getloadavg()
    print(machine_line(load))
    reports = measure(args)
    argv = reference_argv()
    refs = None if args.no_reference or args.device != "cpu" else reference(argv)
    verdicts = {}
    for preset, report in reports.items():
        print_report(preset, report, refs[preset] if refs else None)
        last = report["runs"][-1]
        verdicts[preset] = last["speedup"] >= TARGET_SPEEDUP and last["identical"] and not last["slid"]
        print(f"target {preset}: cached >= {TARGET_SPEEDUP:.0f}x uncached at {last['new_tokens']} new tokens, "
              f"identical, no slide: {'PASS' if verdicts[preset] else 'FAIL'} ({last['speedup']:.2f}x)")
    print(json.dumps({"torch": torch.__version__, "load_before": load, "load_after": os.getloadavg(),
                      "policy": reports, "omp1": refs, "pass": verdicts}))


if __name__ == "__main__":
    main()
