"""The cached decode step against its floor (issue 39, item 2): where a toy's per-token time goes.

For each preset, greedy generation of `--new-tokens` after a `--prompt-len` random prompt, on one thread, three
ways in interleaved repeats (median kept): the cached run on the flat step (model/decode_step.py), the cached
run on the module path (TUI_LAB_MODULE_STEP=1, what every cached step ran before), and the uncached run. Per
cached step it prints:
  step      the run's seconds / new tokens (sampling and the loop included)
  arith     the step's FLOPs (analysis.cost.decode_flops_per_token, averaged over the run's contexts) at the
            measured matmul peak (a 512 x 512 x 512 float32 matmul on the same thread count)
  empty     one step through the same calls with a batch of 0 rows: every op dispatched, no arithmetic
  floor     arith + empty;  gap = step - floor (the loop, sampling, the cache writes and what the calls cost
            beyond dispatch)
and the KV-cache ratio (uncached / cached, the number `tui-lab bench generate` reports). Random weights.
Last line: JSON.

    python benchmarks/speed/decode_floor.py [--presets gpt2-toy transformer-2017-toy] [--new-tokens 240]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

from tui_lab import build_model, load_preset
from tui_lab.analysis.cost import decode_flops_per_token
from tui_lab.generation.loop import generate

PRESETS = ("gpt2-toy", "transformer-2017-toy")


def matmul_peak(size: int = 512, repeats: int = 20) -> float:
    """FLOP/s of a square float32 matmul, the best of `repeats`."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = min(_seconds(lambda: a @ b) for _ in range(repeats))
    return 2 * size ** 3 / best


def _seconds(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def step_flops(model, prompt_len: int, new_tokens: int) -> float:
    """Mean FLOPs of one cached step over the run's contexts (weights, attention over the keys so far)."""
    c = model.config
    cross = c.family == "encoder-decoder"
    first, source = (1, prompt_len) if cross else (prompt_len, 0)
    totals = [sum(decode_flops_per_token(c, first + k, True, source)) for k in range(1, new_tokens)]
    return statistics.fmean(totals)


def empty_step(model, module_path: bool, repeats: int = 200) -> float:
    """Seconds of one cached step with 0 rows: every call dispatched, nothing to compute."""
    c = model.config
    os.environ["TUI_LAB_MODULE_STEP"] = "1" if module_path else "0"
    with torch.inference_mode():
        cache = model.new_cache(0, 64)
        memory = torch.zeros(0, 4, c.d_model) if c.family == "encoder-decoder" else None
        ids = torch.zeros(0, 1, dtype=torch.long)
        model.decode(ids, memory, cache=cache)
        times = []
        for _ in range(repeats):
            cache.length = 1
            times.append(_seconds(lambda: model.decode(ids, memory, cache=cache)))
    return statistics.median(times)


def run_times(model, prompt: torch.Tensor, new_tokens: int, repeats: int) -> dict[str, float]:
    """Median seconds of the three runs, interleaved; also checks the ids agree."""
    kw = {"bos_id": 0} if model.config.family == "encoder-decoder" else {}
    ways = {"flat": ("0", True), "module": ("1", True), "uncached": ("0", False)}
    times: dict[str, list[float]] = {way: [] for way in ways}
    outs = {}
    for r in range(repeats + 1):  # the first round warms up, untimed
        for way, (env, cache) in ways.items():
            os.environ["TUI_LAB_MODULE_STEP"] = env
            start = time.perf_counter()
            outs[way] = generate(model, prompt, new_tokens, temperature=0, use_cache=cache, **kw)
            if r:
                times[way].append(time.perf_counter() - start)
    os.environ["TUI_LAB_MODULE_STEP"] = "0"
    identical = all(torch.equal(outs["flat"], out) for out in outs.values())
    return {way: statistics.median(t) for way, t in times.items()} | {"identical": identical}


def report(name: str, args: argparse.Namespace, peak: float) -> dict:
    torch.manual_seed(0)
    model = build_model(load_preset(name)).eval()
    prompt = torch.randint(model.config.vocab, (1, args.prompt_len))
    t = run_times(model, prompt, args.new_tokens, args.repeats)
    flops = step_flops(model, args.prompt_len, args.new_tokens)
    arith, empty_flat, empty_module = flops / peak, empty_step(model, False), empty_step(model, True)
    load = os.getloadavg()[0]
    for way, empty in (("flat", empty_flat), ("module", empty_module)):
        step = t[way] / args.new_tokens
        floor = arith + empty
        print(f"{name:22s} {way:7s} step {step * 1e3:6.3f} ms  arith {arith * 1e3:6.3f} ms  empty {empty * 1e3:6.3f} ms"
              f"  floor {floor * 1e3:6.3f} ms  gap {(step - floor) * 1e3:6.3f} ms  step/floor {step / floor:4.2f}  "
              f"{args.new_tokens / t[way]:7.0f} tok/s  KV cache {t['uncached'] / t[way]:5.2f}x  (load {load:.2f})")
    print(f"{name:22s} uncached {t['uncached']:.3f} s; {flops / 1e6:.2f} MFLOP per cached step; "
          f"identical ids: {t['identical']}")
    return {**t, "arith_s": arith, "empty_flat_s": empty_flat, "empty_module_s": empty_module, "load": load,
            "kv_cache": t["uncached"] / t["flat"], "flat_tokens_per_s": args.new_tokens / t["flat"],
            "module_tokens_per_s": args.new_tokens / t["module"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--new-tokens", type=int, default=240)
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peak = matmul_peak()
    print(f"torch {torch.__version__}, {args.threads} thread(s), matmul peak {peak / 1e9:.1f} GFLOP/s, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = {name: report(name, args, peak) for name in args.presets}
    print(json.dumps({"torch": torch.__version__, "threads": args.threads, "peak_flops": peak, **rows}))


if __name__ == "__main__":
    main()
