"""The speed comparison: cached vs uncached greedy generation of the same model, side by side.

For each length, both paths generate from the same random prompt on the model's device; seconds are the
median of `repeats` timed runs after an untimed warm-up, and per-token latency is kept step by step (the
median over repeats, with the fastest and slowest run's latency at each position for the spread) so the
app can plot how the uncached path slows as the sequence grows. The same function serves
`tui-lab bench generate`, the app's speed panel and `benchmarks/speed/generate_speed.py`.

Each path runs on its own thread counts (`threads.decode_plan`: its op sizes and the load, read before the
first timed run, and each run's trial of counts where its steps are too small for the rule, as every
generation a person starts has; `threads` is the count the last timed run's steps settled on, `thread_choice`
says why), so the ratio is never won by slowing one side; torch's count comes back after.
The warm-up before each length's timed runs decodes the same length on the same thread count, for both
paths: the first timed run then meets no shape, cache size or OpenMP thread team for the first time.
(Issue 10 saw gpt2-toy's 64 tokens take 0.18 s where 128 took 0.25 s after an 8-token warm-up on torch's
2 threads; on 1 thread no fixed cost was left to measure, while on 2 threads of a loaded 2-core machine
the first steps spun ~80 ms each before settling at ~1 ms.) The warm-up is untimed and reported as such.
The default lengths fit the model's window (`lengths`); a length that slides past max_len is flagged
(`slid`, `slid_steps`, the report's `notes`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from tui_lab.bench.timer import Cancelled, StepTimer, intervals
from tui_lab.devices import out_of_memory
from tui_lab.generation.lengths import BASE_LENGTHS, default_lengths, position_window, slid_steps, slide_note
from tui_lab.generation.loop import Generation, Sampler, eval_mode
from tui_lab.generation.threads import DecodePlan, decode_plan
from tui_lab.model import Transformer

GREEDY = Sampler(temperature=0.0)
DEFAULT_LENGTHS = BASE_LENGTHS  # what is asked for; `default_lengths(config, prompt_len)` fits it to the window
__all__ = ["compare_generation", "default_lengths", "SpeedReport", "SpeedRun"]


@dataclass(frozen=True)
class SpeedRun:
    """One length: cached and uncached seconds (median), per-step latencies, and whether tokens agreed."""

    new_tokens: int
    cached_s: float
    uncached_s: float
    identical: bool
    slid: bool  # learned positions ran past max_len: both paths recomputed a sliding window
    slid_steps: int  # how many of the steps did (0 when the length fits)
    cached_step_s: list[float] = field(repr=False)  # latency of each new token, median over repeats
    uncached_step_s: list[float] = field(repr=False)
    # The spread over repeats at each position: the fastest and the slowest run's latency of that token.
    cached_step_min_s: list[float] = field(default_factory=list, repr=False)
    cached_step_max_s: list[float] = field(default_factory=list, repr=False)
    uncached_step_min_s: list[float] = field(default_factory=list, repr=False)
    uncached_step_max_s: list[float] = field(default_factory=list, repr=False)

    @property
    def speedup(self) -> float:
        return self.uncached_s / self.cached_s

    def tokens_per_s(self, cached: bool, batch: int = 1) -> float:
        return batch * self.new_tokens / (self.cached_s if cached else self.uncached_s)

    def to_dict(self, batch: int = 1) -> dict[str, Any]:
        return {"new_tokens": self.new_tokens, "cached_s": self.cached_s, "uncached_s": self.uncached_s,
                "speedup": self.speedup, "identical": self.identical, "slid": self.slid,
                "slid_steps": self.slid_steps,
                "cached_tokens_per_s": self.tokens_per_s(True, batch),
                "uncached_tokens_per_s": self.tokens_per_s(False, batch),
                "cached_step_s": self.cached_step_s, "uncached_step_s": self.uncached_step_s,
                "cached_step_min_s": self.cached_step_min_s, "cached_step_max_s": self.cached_step_max_s,
                "uncached_step_min_s": self.uncached_step_min_s, "uncached_step_max_s": self.uncached_step_max_s}


@dataclass
class SpeedReport:
    device: str
    prompt_len: int
    batch: int
    repeats: int
    max_len: int | None = None  # the position window (learned positions), None when unlimited
    threads: dict[str, int | None] = field(default_factory=dict)  # "cached"/"uncached": torch threads used
    thread_choice: dict[str, Any] = field(default_factory=dict)  # "cached"/"uncached": why (cpu_threads.Choice)
    runs: list[SpeedRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one plain sentence per length that slid
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "prompt_len": self.prompt_len, "batch": self.batch, "repeats": self.repeats,
                "max_len": self.max_len, "threads": self.threads,
                "thread_choice": self.thread_choice, "cancelled": self.cancelled,
                "runs": [run.to_dict(self.batch) for run in self.runs], "notes": self.notes}


def compare_generation(model: Transformer, prompt_len: int = 16, new_tokens: tuple[int, ...] | None = None,
                       repeats: int = 3, batch: int = 1, on_progress: Callable[[int, int], None] | None = None,
                       should_stop: Callable[[], bool] | None = None, bos_id: int = 0, seed: int = 0) -> SpeedReport:
    """Time cached and uncached greedy generation for each length in `new_tokens`.

    The prompt (the source, for an encoder-decoder, whose target starts at `bos_id`) is `batch` rows of
    `prompt_len` random ids drawn with `seed`. No eos: every run makes exactly the tokens asked for.
    `new_tokens=None`: `default_lengths(model.config, prompt_len)`, which fit the window.
    `on_progress(done, total)` counts generation runs, warm-ups included; `should_stop()` is polled
    between tokens and ends the comparison early (`cancelled` in the report).
    """
    _check(prompt_len, new_tokens, repeats, batch, bos_id, model.config.vocab)
    config = model.config
    new_tokens = default_lengths(config, prompt_len) if new_tokens is None else tuple(new_tokens)
    device = next(model.parameters()).device
    _check_memory(config, prompt_len, new_tokens, batch, str(device))
    report = SpeedReport(str(device), prompt_len, batch, repeats, max_len=position_window(config),
                         notes=[note for n in new_tokens if (note := slide_note(config, prompt_len, n))])
    prompt = torch.randint(model.config.vocab, (batch, prompt_len), generator=torch.Generator().manual_seed(seed))
    prompt = prompt.to(device)
    timer = StepTimer(device, len(new_tokens) * 2 * (repeats + 1), should_stop, on_progress)

    # Chosen before anything is timed (reading the load takes ~15 ms; see cpu_threads.py); each run gets a
    # fresh copy (its own trial), the last timed run's says what the report shows.
    plans = {True: decode_plan(model, True, batch, prompt_len), False: decode_plan(model, False, batch, prompt_len)}

    def run(n: int, use_cache: bool) -> _Timing:
        plan = plans[use_cache]
        plan = DecodePlan(plan.prefill, plan.steps) if plan is not None else None
        timing = _timed(timer, model, prompt, bos_id, n, use_cache, plan)
        if plan is not None:
            path = "cached" if use_cache else "uncached"
            report.threads[path], report.thread_choice[path] = plan.threads, plan.to_dict()
        return timing

    report.threads = {"cached": None, "uncached": None}
    report.thread_choice = {"cached": None, "uncached": None}
    try:
        with out_of_memory(str(device), "measuring generation speed", "try fewer new tokens or a smaller batch"), \
                eval_mode(model), torch.inference_mode():
            for n in new_tokens:
                report.runs.append(_measure(run, n, repeats, slid_steps(config, prompt_len, n)))
    except Cancelled:  # `should_stop()` said yes; the report keeps the lengths already measured
        report.cancelled = True
    return report


def _measure(run: Callable[[int, bool], _Timing], new_tokens: int, repeats: int, slid: int) -> SpeedRun:
    results: dict[bool, list[_Timing]] = {True: [], False: []}
    # Warm-ups first, then the timed runs alternate between the paths: a shared machine's load, which
    # comes and goes, then weighs on both alike.
    for timed in [False] + [True] * repeats:
        for use_cache in (True, False):
            timing = run(new_tokens, use_cache)  # the warm-up: this length, these counts, not kept
            if timed:
                results[use_cache].append(timing)
    cached, uncached = results[True], results[False]
    return SpeedRun(
        new_tokens=new_tokens,
        cached_s=statistics.median(r.seconds for r in cached),
        uncached_s=statistics.median(r.seconds for r in uncached),
        identical=all(torch.equal(c.ids, u.ids) for c, u in zip(cached, uncached, strict=True)),
        slid=cached[-1].slid or uncached[-1].slid,
        slid_steps=slid,
        cached_step_s=_per_step(cached, statistics.median),
        uncached_step_s=_per_step(uncached, statistics.median),
        cached_step_min_s=_per_step(cached, min),
        cached_step_max_s=_per_step(cached, max),
        uncached_step_min_s=_per_step(uncached, min),
        uncached_step_max_s=_per_step(uncached, max),
    )


@dataclass(frozen=True)
class _Timing:
    seconds: float
    step_s: list[float]
    ids: Tensor  # (N, P + new)
    slid: bool


def _timed(timer: StepTimer, model: Transformer, prompt: Tensor, bos_id: int, new_tokens: int,
           use_cache: bool, plan: DecodePlan | None) -> _Timing:
    """One greedy generation, timed token by token."""
    run = Generation(model, prompt, new_tokens, GREEDY, use_cache, bos_id=bos_id, plan=plan)
    marks = timer.marks(run.steps(want_probs=False))
    return _Timing(marks[-1] - marks[0], intervals(marks), run.sequence.clone(), run.state.slid)


def _per_step(timings: list[_Timing], reduce: Callable[[list[float]], float]) -> list[float]:
    """`reduce` (median, min, max) over the repeats, position by position."""
    return [reduce(list(step)) for step in zip(*(t.step_s for t in timings), strict=True)]


def _check_memory(config: Any, prompt_len: int, new_tokens: tuple[int, ...], batch: int, device: str) -> None:
    """The longest run's cache and scores, or the uncached path's recomputed activations, must fit what is free
    (Speed's fields take any number)."""
    from tui_lab.analysis.budget import generation_budget
    from tui_lab.devices import check_free

    longest = max(new_tokens)
    need = max(generation_budget(config, prompt_len, longest, batch, cached, device).bytes for cached in (True, False))
    check_free(need, device, f"measuring {longest:,} new tokens after a {prompt_len:,}-token prompt x batch {batch:,}",
               "try fewer new tokens, a shorter prompt or a smaller batch")


def _check(prompt_len: int, new_tokens: tuple[int, ...] | None, repeats: int, batch: int, bos_id: int,
           vocab: int) -> None:
    if prompt_len < 1:
        raise ValueError(f"prompt_len ({prompt_len}) must be >= 1")
    if new_tokens is not None and (not new_tokens or any(n < 1 for n in new_tokens)):
        raise ValueError(f"new_tokens ({list(new_tokens)}) must be one or more lengths, each >= 1")
    if repeats < 1:
        raise ValueError(f"repeats ({repeats}) must be >= 1")
    if batch < 1:
        raise ValueError(f"batch ({batch}) must be >= 1")
    if not 0 <= bos_id < vocab:
        raise ValueError(f"bos_id ({bos_id}) must be in 0..{vocab - 1}")
