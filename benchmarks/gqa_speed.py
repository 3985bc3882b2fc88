"""Cached generation with multi-head, grouped-query and multi-query attention at the same width.

Three models that differ only in kv_heads (H, H/4, 1 by default: d_model 512, 8 heads, 4 layers, RoPE,
SwiGLU, RMSNorm, random weights: speed does not depend on them). Each fills its KV cache with a prompt, then
decodes `--new-tokens` tokens one at a time through the cache, greedily; the time of each decode step is
kept and the median over steps and repeats reported, with the KV cache's bytes (measured from the cache's
buffers, and equal to the analysis's prediction). The three models take turns within each repeat, so a
machine whose load changes during the run slows them alike. One thread by default: on a shared CPU, OpenMP's
spin-waiting threads beside other busy processes make every step erratic. Last line: JSON.

    python benchmarks/gqa_speed.py [--batch 4] [--prompt-len 512] [--new-tokens 128] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
from one_thread import machine_line

from tui_lab import build_model
from tui_lab.analysis import memory
from tui_lab.config import ModelConfig


def config_for(args: argparse.Namespace, kv_heads: int) -> ModelConfig:
    return ModelConfig(name=f"kv{kv_heads}", family="decoder-only", decoder_layers=args.layers, d_model=args.d_model,
                       heads=args.heads, kv_heads=kv_heads, d_ff=args.d_ff, vocab=256,
                       max_len=args.prompt_len + args.new_tokens, norm="rmsnorm", positions="rope",
                       activation="swiglu", bias=False, dropout=0.0)


@torch.inference_mode()
def decode_steps(model, prompt: torch.Tensor, new_tokens: int) -> tuple[list[float], int]:
    """Seconds of each cached decode step after the prompt's prefill, and the cache's bytes."""
    cache = model.new_cache(prompt.shape[0], prompt.shape[1] + new_tokens)
    token = model.decode(prompt, cache=cache)[:, -1:].argmax(-1)
    steps = []
    for _ in range(new_tokens - 1):
        start = time.perf_counter()
        token = model.decode(token, cache=cache)[:, -1:].argmax(-1)
        steps.append(time.perf_counter() - start)
    return steps, cache.bytes()


def measure(args: argparse.Namespace, kv_choices: list[int]) -> dict[int, dict]:
    """{kv_heads: result} with the models taking turns in every repeat."""
    models, steps, cache_bytes = {}, {k: [] for k in kv_choices}, {}
    for k in kv_choices:
        torch.manual_seed(0)
        models[k] = build_model(config_for(args, k)).eval()
    prompt = torch.randint(0, 256, (args.batch, args.prompt_len))
    for model in models.values():
        decode_steps(model, prompt[:, :32], 8)  # warm-up: allocator, kernels, RoPE table
    for _ in range(args.repeats):
        for k, model in models.items():
            run, cache_bytes[k] = decode_steps(model, prompt, args.new_tokens)
            steps[k] += run
    return {k: summarise(models[k].config, steps[k], cache_bytes[k], args) for k in kv_choices}


def summarise(config: ModelConfig, steps: list[float], cache_bytes: int, args: argparse.Namespace) -> dict:
    per_token = memory(config).kv_cache_per_token
    assert cache_bytes == per_token * args.batch * (args.prompt_len + args.new_tokens)  # measured == predicted
    ordered, median = sorted(steps), statistics.median(steps)
    return {"kv_heads": config.n_kv_heads, "kv_bytes_per_token": per_token, "kv_cache_bytes": cache_bytes,
            "median_step_ms": round(median * 1e3, 3), "tokens_per_s": round(args.batch / median, 1),
            "p10_step_ms": round(ordered[len(ordered) // 10] * 1e3, 3),
            "p90_step_ms": round(ordered[9 * len(ordered) // 10] * 1e3, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, nargs="+", default=None, help="default: heads, heads/4, 1")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=1376)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt-len", type=int, default=512)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    kv_choices = args.kv_heads or [args.heads, max(1, args.heads // 4), 1]
    print(machine_line(os.getloadavg()))
    torch.set_num_threads(args.threads)
    print(f"d_model {args.d_model}, {args.heads} heads, {args.layers} layers, batch {args.batch}, prompt "
          f"{args.prompt_len}, {args.new_tokens} new tokens, {args.threads} thread(s), median of "
          f"{args.repeats} x {args.new_tokens - 1} steps")
    print(f"  {'attention':<10} {'kv heads':>8} {'KV / token':>11} {'KV cache':>10} {'ms / step':>10} {'tok/s':>8}")
    results = {}
    for k, r in measure(args, kv_choices).items():
        name = "MHA" if k == args.heads else "MQA" if k == 1 else "GQA"
        results[f"{name}-{k}"] = r
        print(f"  {name:<10} {k:>8} {r['kv_bytes_per_token'] / 1024:>8.1f} KiB {r['kv_cache_bytes'] / 2**20:>6.1f} MiB "
              f"{r['median_step_ms']:>10.2f} {r['tokens_per_s']:>8.0f}")
    base = results[next(iter(results))]["median_step_ms"]
    for r in results.values():
        r["speedup_vs_first"] = round(base / r["median_step_ms"], 3)
    print(json.dumps({"config": {k: v for k, v in vars(args).items()}, "results": results,
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
