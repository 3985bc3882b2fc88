"""Cached greedy generation with multi-head, grouped-query and multi-query attention, side by side.

One config is built three times, differing only in kv_heads: H (MHA), a divisor in between (GQA:
`analysis.cost.example_kv_heads`, or the config's own grouping) and 1 (MQA), random weights drawn with a
fixed seed (the time of a step does not depend on them). Each fills its KV cache with the same prompt, then
decodes one token at a time through the cache, greedily; every decode step is timed (CUDA synchronised at
each mark) and the median step gives tokens/s = batch / median. The three take turns within each repeat,
in a rotated order, so load that comes and goes on a shared machine weighs on all three alike and no model
always goes first. KV bytes are read from the cache's buffers beside `analysis.cost.kv_cache_bytes`'s
prediction (bounded by the window for a sliding-window model: its cache is a rolling buffer).

Decoding runs through the one loop (`generation.loop.Generation`), timed by `bench.timer.StepTimer`.
The same function serves the Speed view's "MHA vs GQA vs MQA" panel and `benchmarks/speed/gqa_speed.py`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from tui_lab.analysis.cost import DTYPE_BYTES, example_kv_heads, kv_bytes_per_token, kv_cache_bytes
from tui_lab.bench.timer import Cancelled, StepTimer, intervals
from tui_lab.config import ModelConfig
from tui_lab.generation.loop import Generation, Sampler
from tui_lab.generation.threads import decode_threads, torch_threads

GREEDY = Sampler(temperature=0.0)

WARMUP_TOKENS = 8  # an untimed short run per model first: allocator, kernels, RoPE tables


@dataclass
class KVRow:
    """One attention kind: its kv heads, KV cache bytes (predicted and measured) and every timed step."""

    name: str  # "MHA", "GQA" or "MQA"
    kv_heads: int
    kv_bytes_per_token: int  # analysis.cost.kv_bytes_per_token in the model's dtype: 2 x layers x kv heads x d_head x B
    cache_bytes: int = 0  # measured: the cache's K and V buffers for batch x (prompt + new) positions
    predicted_bytes: int = 0  # analysis.cost.kv_cache_bytes: per token x batch x positions kept (window-bounded)
    step_s: list[float] = field(default_factory=list, repr=False)  # every timed decode step, all repeats

    @property
    def median_step_s(self) -> float:
        return statistics.median(self.step_s) if self.step_s else float("nan")

    def tokens_per_s(self, batch: int) -> float:
        return batch / self.median_step_s if self.step_s else 0.0

    def spread_s(self) -> tuple[float, float]:
        """The 10th and 90th percentile step: how noisy the median is."""
        ordered = sorted(self.step_s)
        return (ordered[len(ordered) // 10], ordered[9 * len(ordered) // 10]) if ordered else (0.0, 0.0)


@dataclass
class KVReport:
    device: str
    config: ModelConfig  # the MHA variant: width, layers and heads shared by all three
    batch: int
    prompt_len: int
    new_tokens: int
    repeats: int
    threads: int | None
    rows: list[KVRow] = field(default_factory=list)
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "d_model": self.config.d_model, "heads": self.config.heads,
                "layers": self.config.decoder_layers, "batch": self.batch, "prompt_len": self.prompt_len,
                "new_tokens": self.new_tokens, "repeats": self.repeats, "threads": self.threads,
                "cancelled": self.cancelled,
                "rows": [{"name": r.name, "kv_heads": r.kv_heads, "kv_bytes_per_token": r.kv_bytes_per_token,
                          "cache_bytes": r.cache_bytes,
                          "predicted_bytes": r.predicted_bytes, "median_step_ms": r.median_step_s * 1e3,
                          "p10_step_ms": r.spread_s()[0] * 1e3, "p90_step_ms": r.spread_s()[1] * 1e3,
                          "tokens_per_s": r.tokens_per_s(self.batch), "steps": len(r.step_s)} for r in self.rows]}


def kv_choices(config: ModelConfig, grouped: int | None = None) -> list[tuple[str, int]]:
    """(name, kv_heads) for MHA, GQA and MQA at the config's heads; GQA left out when no divisor lies between.

    `grouped` picks the GQA kv_heads (a divisor of heads strictly between 1 and heads); by default the config's
    own grouping, else `example_kv_heads`."""
    h = config.heads
    if grouped is None:
        own = config.n_kv_heads
        grouped = own if 1 < own < h else example_kv_heads(h)
    elif not (1 < grouped < h and h % grouped == 0):
        raise ValueError(f"kv_heads ({grouped}) for GQA must divide heads ({h}) and lie strictly between 1 and {h}")
    return [("MHA", h)] + ([("GQA", grouped)] if grouped else []) + [("MQA", 1)]


def check_kv_comparison(config: ModelConfig, prompt_len: int, new_tokens: int, repeats: int, batch: int,
                        device: str = "cpu") -> None:
    """One ValueError line naming the field and the rule, before anything is built (the view calls it too)."""
    for name, value, least in (("prompt", prompt_len, 1), ("new tokens", new_tokens, 2), ("repeats", repeats, 1),
                               ("batch", batch, 1)):
        if value < least:
            raise ValueError(f"{name} ({value}) must be >= {least}")
    if config.family != "decoder-only":
        raise ValueError(f"family ({config.family}) must be decoder-only: cached generation of one stack")
    if config.heads < 2:
        raise ValueError(f"heads ({config.heads}) must be >= 2: with one head MHA and MQA are the same model")
    if prompt_len + new_tokens > config.max_len:
        raise ValueError(f"prompt + new tokens ({prompt_len + new_tokens}) must fit max_len ({config.max_len})")
    _check_memory([config.replace(kv_heads=k) for _, k in kv_choices(config)], prompt_len, new_tokens, batch, device)


def compare_kv_heads(config: ModelConfig, device: str = "cpu", prompt_len: int = 64, new_tokens: int = 64,
                     repeats: int = 3, batch: int = 1, grouped: int | None = None, threads: int | None = None,
                     on_progress: Callable[[int, int], None] | None = None,
                     should_stop: Callable[[], bool] | None = None, seed: int = 0) -> KVReport:
    """Build `config` with kv_heads = heads, a divisor, 1 and time their cached greedy decoding, interleaved.

    `threads`: torch threads for every model (None: `decode_threads` of the MHA model, chosen for the load now).
    `on_progress(done, total)` counts runs (a warm-up per model, then repeats x models); `should_stop()` is
    polled between tokens and ends early (`cancelled`, the steps timed so far kept)."""
    check_kv_comparison(config, prompt_len, new_tokens, repeats, batch, device)
    from tui_lab.loading import load_model

    variants = [(name, config.replace(kv_heads=k, name=f"{config.name}-{name.lower()}"))
                for name, k in kv_choices(config, grouped)]
    models = [load_model("config", c, device=device, seed=seed).model for _, c in variants]
    p = next(models[0].parameters())
    dtype = str(p.dtype).removeprefix("torch.")
    report = KVReport(str(p.device), variants[0][1], batch, prompt_len, new_tokens, repeats, threads)
    report.rows = [KVRow(name, c.n_kv_heads, _kv_per_token(c, dtype), predicted_bytes=_kv_bytes(
        c, prompt_len + new_tokens, batch, dtype)) for name, c in variants]
    prompt = torch.randint(config.vocab, (batch, prompt_len), generator=torch.Generator().manual_seed(seed))
    prompt = prompt.to(p.device)
    timer = StepTimer(p.device, len(models) * (repeats + 1), should_stop, on_progress)
    report.threads = decode_threads(models[0], True, batch) if threads is None else threads
    try:
        with torch_threads(report.threads), torch.inference_mode():
            for model in models:
                _decode_steps(timer, model, prompt, WARMUP_TOKENS)
            for r in range(repeats):
                for i in _rotated(len(models), r):
                    steps, report.rows[i].cache_bytes = _decode_steps(timer, models[i], prompt, new_tokens)
                    report.rows[i].step_s += steps
    except Cancelled:
        report.cancelled = True
    return report


def _check_memory(configs: list[ModelConfig], prompt_len: int, new_tokens: int, batch: int, device: str) -> None:
    """The models built side by side, each with its cache, scores and one layer of the prompt's pass, must fit
    what is free: the panel's batch field takes six digits (a 5-digit batch grew the app past the machine's memory
    and the kernel ended it)."""
    from tui_lab.analysis.budget import generation_budget
    from tui_lab.analysis.cost import activation_bytes, memory
    from tui_lab.devices import check_free

    need = sum(memory(c).weights + generation_budget(c, prompt_len, new_tokens, batch, True, device).bytes
               + activation_bytes(c, batch, prompt_len, 4) // max(c.layers, 1) for c in configs)
    tokens = prompt_len + new_tokens
    check_free(need, device, f"building {len(configs)} models for batch {batch:,} x {tokens:,} tokens",
               "lower batch, prompt or new")


def _kv_per_token(c: ModelConfig, dtype: str) -> int:
    return kv_bytes_per_token(c, _analysed(dtype))


def _kv_bytes(c: ModelConfig, tokens: int, batch: int, dtype: str) -> int:
    return kv_cache_bytes(c, tokens, batch, _analysed(dtype))


def _analysed(dtype: str) -> str:
    """The model's dtype as the analysis names it (fp32 for one it has no size for)."""
    return dtype if dtype in DTYPE_BYTES else "float32"


def _rotated(n: int, start: int) -> list[int]:
    return [(start + i) % n for i in range(n)]


def _decode_steps(timer: StepTimer, model, prompt, new_tokens: int) -> tuple[list[float], int]:
    """(seconds of each decode step after the prefill, the cache's bytes): cached greedy decoding through
    the one loop; its first step fills the cache with the prompt and is not a decode step."""
    # One token more than asked: its step is not timed, and the cache then holds prompt + new_tokens, the
    # length analysis.cost predicts the bytes of.
    run = Generation(model, prompt, new_tokens + 1, GREEDY, use_cache=True)
    steps = intervals(timer.marks(run.steps(want_probs=False)))[1:new_tokens]
    return steps, run.state.cache.bytes()
