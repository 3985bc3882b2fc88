"""Cached vs uncached greedy generation on both toy presets (target: >= 3x at 256 new tokens, same tokens).

gpt2-toy has 256 learned positions; so that 256 new tokens after the prompt measure the cache rather than
the sliding window (where every step must recompute), its max_len is raised to fit prompt + new tokens.
The 2017 toy's sinusoidal positions have no limit. Random weights: speed does not depend on them.

    python benchmarks/generate_speed.py [--new-tokens 64 256] [--prompt-len 16] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse

import torch

from tui_lab import build_model, load_preset
from tui_lab.generation.speed import compare_generation

PRESETS = ("gpt2-toy", "transformer-2017-toy")
TARGET_SPEEDUP, TARGET_TOKENS = 3.0, 256


def fitted_config(preset: str, tokens_needed: int):
    config = load_preset(preset)
    if config.positions == "learned" and config.max_len < tokens_needed:
        print(f"{preset}: max_len raised from {config.max_len} to {tokens_needed} (prompt + new tokens)")
        config = config.replace(max_len=tokens_needed)
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1, steady on a shared machine; 0: torch's default)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread(s)")
    verdicts = []
    for preset in PRESETS:
        torch.manual_seed(0)
        config = fitted_config(preset, args.prompt_len + max(args.new_tokens))
        model = build_model(config, device=args.device)
        report = compare_generation(model, prompt_len=args.prompt_len, new_tokens=tuple(args.new_tokens),
                                    repeats=args.repeats)
        print(f"{preset} on {report.device}, prompt {args.prompt_len}, median of {args.repeats}:")
        print(f"  {'new':>5} {'cached s':>9} {'uncached s':>10} {'cached tok/s':>12} {'uncached tok/s':>14} "
              f"{'speedup':>8} identical")
        for run in report.runs:
            print(f"  {run.new_tokens:>5} {run.cached_s:>9.3f} {run.uncached_s:>10.3f} {run.tokens_per_s(True):>12.0f} "
                  f"{run.tokens_per_s(False):>14.0f} {run.speedup:>7.2f}x {run.identical}")
            if run.new_tokens == TARGET_TOKENS:
                verdicts.append((preset, run.speedup >= TARGET_SPEEDUP and run.identical, run.speedup))
    for preset, ok, speedup in verdicts:
        print(f"target {preset}: cached >= {TARGET_SPEEDUP:.0f}x uncached at {TARGET_TOKENS} new tokens, identical: "
              f"{'PASS' if ok else 'FAIL'} ({speedup:.2f}x)")


if __name__ == "__main__":
    main()
