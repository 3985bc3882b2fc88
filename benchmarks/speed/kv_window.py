"""A sliding-window model's KV cache: the rolling buffer (window + global tokens) against a cache that keeps
every position (what the lab did before: same mask, same tokens, memory growing with the length).

One model (d_model 256, 8 heads, 2 kv heads, 4 layers, RoPE, window 128 and 4 global tokens by default,
random weights: speed does not depend on them) fills each cache with a prompt, then decodes greedily one
token at a time to a length of several windows. Per cache: its bytes (measured from the buffers; the rolling
one equals `analysis.cost.kv_cache_bytes`), the median decode step as tokens/s, and the wall and CPU time of
all the decode steps. The two take turns within each repeat so changing load weighs on both; both must pick
the same tokens. One thread by default (a shared CPU). Last line: JSON.

    python benchmarks/speed/kv_window.py [--window 128] [--prompt-len 128] [--new-tokens 640] [--batch 4] [--repeats 3]
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
from tui_lab.analysis.cost import kv_cache_bytes
from tui_lab.config import ModelConfig
from tui_lab.model.kv_cache import LayerKV


def config_for(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig(name="kv-window-bench", family="decoder-only", decoder_layers=args.layers,
                       d_model=args.d_model, heads=args.heads, kv_heads=args.kv_heads, d_ff=4 * args.d_model,
                       vocab=256, max_len=args.prompt_len + args.new_tokens, norm="rmsnorm", positions="rope",
                       activation="swiglu", bias=False, dropout=0.0, attention_window=args.window,
                       global_tokens=args.global_tokens)


def every_position_cache(model, batch: int, capacity: int):
    """The cache before the rolling buffer: every layer keeps all `capacity` positions."""
    cache = model.new_cache(batch, capacity)
    c, p = model.config, next(model.parameters())
    cache.layers = [LayerKV(batch, c.n_kv_heads, capacity, c.d_head, p.device, p.dtype) for _ in cache.layers]
    return cache


def decode(model, cache, prompt: torch.Tensor, new_tokens: int) -> tuple[list[float], float, float, torch.Tensor]:
    """(each decode step's seconds, wall and CPU seconds of all steps, the tokens chosen)."""
    token = model.decode(prompt, cache=cache)[:, -1:].argmax(-1)  # prefill: not timed
    steps, chosen = [], [token]
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(new_tokens - 1):
        start = time.perf_counter()
        token = model.decode(token, cache=cache)[:, -1:].argmax(-1)
        steps.append(time.perf_counter() - start)
        chosen.append(token)
    return steps, time.perf_counter() - wall, time.process_time() - cpu, torch.cat(chosen, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("d-model", 256), ("heads", 8), ("kv-heads", 2), ("layers", 4), ("window", 128),
                          ("global-tokens", 4), ("batch", 4), ("prompt-len", 128), ("new-tokens", 640),
                          ("repeats", 3), ("threads", 1)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(machine_line(os.getloadavg()))
    torch.manual_seed(0)
    config = config_for(args)
    model = build_model(config).eval()
    length = args.prompt_len + args.new_tokens
    prompt = torch.randint(config.vocab, (args.batch, args.prompt_len))
    caches = {"every position": lambda: every_position_cache(model, args.batch, length),
              "rolling window": lambda: model.new_cache(args.batch, length)}
    runs = {name: {"steps": [], "wall_s": 0.0, "cpu_s": 0.0} for name in caches}
    with torch.inference_mode():
        for make in caches.values():
            decode(model, make(), prompt, 8)  # warm-up: allocator, kernels, RoPE table
        for r in range(args.repeats):
            tokens = {}
            for name in list(caches)[r % 2:] + list(caches)[: r % 2]:
                cache = caches[name]()
                steps, wall, cpu, tokens[name] = decode(model, cache, prompt, args.new_tokens)
                runs[name]["steps"] += steps
                runs[name]["wall_s"] += wall
                runs[name]["cpu_s"] += cpu
                runs[name]["kv_bytes"] = cache.bytes()
            assert torch.equal(*tokens.values()), "the two caches chose different tokens"
    assert runs["rolling window"]["kv_bytes"] == kv_cache_bytes(config, length, args.batch)  # measured == predicted
    print(f"window {args.window} + {args.global_tokens} global, d_model {args.d_model}, {args.heads} heads / "
          f"{args.kv_heads} kv, {args.layers} layers, batch {args.batch}, prompt {args.prompt_len} + "
          f"{args.new_tokens} new = {length} tokens ({length / args.window:.1f} windows), {args.threads} thread(s), "
          f"{args.repeats} x {args.new_tokens - 1} steps")
    print(f"  {'cache':<15} {'KV bytes':>12} {'tok/s':>8} {'ms/step':>8} {'wall s':>7} {'cpu s':>7}")
    results = {}
    for name, run in runs.items():
        median = statistics.median(run["steps"])
        results[name] = {"kv_bytes": run["kv_bytes"], "tokens_per_s": args.batch / median,
                         "median_step_ms": median * 1e3, "wall_s": run["wall_s"], "cpu_s": run["cpu_s"]}
        print(f"  {name:<15} {run['kv_bytes']:>12,} {args.batch / median:>8.0f} {median * 1e3:>8.2f} "
              f"{run['wall_s']:>7.2f} {run['cpu_s']:>7.2f}")
    print(json.dumps({"config": vars(args), "results": results, "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
