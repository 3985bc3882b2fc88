"""Cached generation with multi-head, grouped-query and multi-query attention at the same width.

Three models that differ only in kv_heads (H, H/4, 1 by default: d_model 512, 8 heads, 4 layers, RoPE,
SwiGLU, RMSNorm, random weights: speed does not depend on them), measured by the core's
`tui_lab.bench.gqa_speed.compare_kv_heads`, the function the app's Speed view runs: each fills its KV
cache with a prompt, then decodes `--new-tokens` tokens one at a time through the cache, greedily; the time of
each decode step is kept and the median over steps and repeats reported, with the KV cache's bytes (measured
from the cache's buffers, and equal to the analysis's prediction). The three models take turns within each
repeat, so a machine whose load changes during the run slows them alike. One thread by default: on a shared
CPU, OpenMP's spin-waiting threads beside other busy processes make every step erratic (`--threads 0`: the
count the app would pick, measured once per machine). Last line: JSON.

    python benchmarks/speed/gqa_speed.py [--batch 4] [--prompt-len 512] [--new-tokens 128] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os

from one_thread import machine_line

from tui_lab.bench.gqa_speed import compare_kv_heads
from tui_lab.config import ModelConfig


def config_for(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig(name="gqa-bench", family="decoder-only", decoder_layers=args.layers, d_model=args.d_model,
                       heads=args.heads, d_ff=args.d_ff, vocab=256, max_len=args.prompt_len + args.new_tokens,
                       norm="rmsnorm", positions="rope", activation="swiglu", bias=False, dropout=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--grouped", type=int, default=None, help="GQA's kv heads (default: heads / 4)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=1376)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt-len", type=int, default=512)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    grouped = args.grouped or (args.heads // 4 if 1 < args.heads // 4 < args.heads else None)
    print(machine_line(os.getloadavg()))
    report = compare_kv_heads(config_for(args), args.device, args.prompt_len, args.new_tokens, args.repeats,
                              args.batch, grouped=grouped, threads=args.threads or None)
    print(f"d_model {args.d_model}, {args.heads} heads, {args.layers} layers, batch {args.batch}, prompt "
          f"{args.prompt_len}, {args.new_tokens} new tokens, {report.threads} thread(s) on {report.device}, "
          f"median of {args.repeats} x {args.new_tokens - 1} steps")
    print(f"  {'attention':<10} {'kv heads':>8} {'KV / token':>11} {'KV cache':>10} {'ms / step':>10} {'tok/s':>8}")
    results = {}
    for row in report.rows:
        # measured == predicted (window-bounded for a sliding-window model)
        assert row.cache_bytes == row.predicted_bytes, (row.name, row.cache_bytes, row.predicted_bytes)
        results[f"{row.name}-{row.kv_heads}"] = r = next(d for d in report.to_dict()["rows"] if d["name"] == row.name)
        print(f"  {row.name:<10} {row.kv_heads:>8} {row.kv_bytes_per_token / 1024:>8.1f} KiB "
              f"{row.cache_bytes / 2**20:>6.1f} MiB {r['median_step_ms']:>10.2f} {r['tokens_per_s']:>8.0f}")
    base = report.rows[0].median_step_s
    for row, r in zip(report.rows, results.values(), strict=True):
        r["speedup_vs_mha"] = round(base / row.median_step_s, 3)
    print(json.dumps({"config": vars(args), "results": results, "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
