"""How many CPU threads decoding runs on: chosen for each call by `tui_lab.cpu_threads`, restored after.

Decoding at batch 1 is many tiny ops; OpenMP threads then cost more in hand-offs than they give, and on a
busy machine far more (gpt2-toy's cached step took ~1.2 ms on 1 thread and 1-80 ms on torch's 2 at load
7-12). The choice was once measured per path and kept; a kept choice goes stale as the load changes
(issue 39: 20-80x slower), so it is now the rule in `cpu_threads.choose`, applied at each call: the call's
largest op (its grain) and the cores others leave free now. The ceiling is torch's current count (a count a
person set with OMP_NUM_THREADS or torch.set_num_threads stays the ceiling). `TUI_LAB_DECODE_THREADS=N`
forces N (for measuring). Devices other than the CPU keep torch's setting.

A generation (`DecodePlan`) chooses twice: for its prefill (the prompt, or the source through the encoder: a
pass over every prompt token) and for its steps. Steps too small for the rule, with cores free, are tried:
TRIAL_BLOCK steps on each count, then the faster until the next trial, at step TRIAL_AGAIN and each doubling
after it (64, 128, 256...: the context grows, the load moves). On idle cores 2 threads gained 5-13% a toy step on
an Intel Xeon in one measurement and lost 15% in another at 240 tokens, and lost 13% on an AMD EPYC; a toy's
16-token prefill gained on both. Between trials the steps on more threads than the fewest tried are watched: load
that comes after a trial made them slow by far more than one thread would be (a 64-token run beside the long-tier
crawlers: 2 threads settled at step 10, then 0.10 s where one thread took 0.02 s), so SLOW_STEPS steps in a row
slower than SLOW_FACTOR times the fewest's tried step send the steps to the fewest until the next trial.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

from tui_lab.cpu_threads import Choice, choose, op_grain
from tui_lab.model import Transformer

UNCACHED_CONTEXT = 128  # the tokens an uncached pass is sized at (its passes grow; this is a typical one)
FORCED_BY = "TUI_LAB_DECODE_THREADS"
TRIAL_BLOCK = 5  # steps each tried count runs; the first after a switch is not timed (the pool wakes)
TRIAL_AGAIN = 64  # the step of the second trial; each later one at twice the step of the one before
SLOW_FACTOR = 2.0  # a step on more threads slower than this times the fewest's tried step: the load has come
SLOW_STEPS = 2  # ...for this many steps in a row, and the steps go to the fewest until the next trial
T = TypeVar("T")


@contextmanager
def torch_threads(count: int | None) -> Iterator[int]:
    """Run the block on `count` torch threads (None: unchanged); the previous count comes back after."""
    previous = torch.get_num_threads()
    if count is not None and count != previous:
        torch.set_num_threads(count)
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


def decode_threads(model: Transformer, use_cache: bool, rows: int = 1) -> int | None:
    """The thread count for decoding `rows` rows of `model` on `use_cache`'s path now; None keeps torch's."""
    choice = decode_choice(model, use_cache, rows)
    return choice.threads if choice is not None else None


def decode_choice(model: Transformer, use_cache: bool, rows: int = 1) -> Choice | None:
    """`decode_threads` with its reason (for `--json`); None off the CPU."""
    if next(model.parameters()).device.type != "cpu":
        return None  # GPU kernels do not use the OpenMP pool for their work
    return choose(decode_grain(model.config, use_cache, rows), torch.get_num_threads(), FORCED_BY)


def decode_grain(config, use_cache: bool, rows: int = 1) -> int:
    """Multiply-adds of a decode step's largest op: a cached step passes one token per row, an uncached one
    the whole sequence (sized at UNCACHED_CONTEXT, or the window where it is shorter)."""
    from tui_lab.generation.lengths import position_window

    tokens = 1 if use_cache else min(UNCACHED_CONTEXT, position_window(config) or UNCACHED_CONTEXT)
    return op_grain(config, rows * tokens)


def decode_plan(model: Transformer, use_cache: bool, rows: int = 1, prompt_tokens: int = 1) -> DecodePlan | None:
    """The thread counts of one generation of `rows` rows after a `prompt_tokens` prompt (the source, for an
    encoder-decoder); None off the CPU. The load is read at most once, here, before any clock starts."""
    if next(model.parameters()).device.type != "cpu":
        return None
    ceiling = torch.get_num_threads()
    steps = choose(decode_grain(model.config, use_cache, rows), ceiling, FORCED_BY, may_try=use_cache)
    prefill = choose(op_grain(model.config, rows * max(1, prompt_tokens)), ceiling, FORCED_BY, steps.load)
    return DecodePlan(prefill, steps)


@dataclass
class DecodePlan:
    """A generation's thread counts: the prefill's (step 0, and the encoder before it) and the steps' (tried,
    where `steps.trial` names counts: from step 1, TRIAL_AGAIN and its doublings, each count runs TRIAL_BLOCK
    steps, and the steps up to the next trial run on the faster)."""

    prefill: Choice
    steps: Choice
    tried_s: dict[int, float] = field(default_factory=dict)  # the last trial: median seconds of a timed step
    settled: int | None = None  # the count the last trial chose
    trials: int = 0  # trials finished
    fell_back: list[int] = field(default_factory=list)  # the steps at which slow steps sent the run to the fewest
    _slow: int = 0  # slow steps in a row on more threads than the fewest tried
    _start: int = 1  # the step the current (or next) trial starts at
    _times: dict[int, list[float]] = field(default_factory=dict, repr=False)

    def count(self, index: int) -> int:
        """The thread count of step `index` (0: the prefill)."""
        if index == 0:
            return self.prefill.threads
        position = index - self._start
        if 0 <= position < TRIAL_BLOCK * len(self.steps.trial):
            return self.steps.trial[position // TRIAL_BLOCK]
        return self.threads

    def run(self, index: int, work: Callable[[], T]) -> T:
        """`work()` (step `index`'s forward) on its count, timed while its count is on trial, and watched between
        trials while it is more than the fewest tried (`_watch`)."""
        count = self.count(index)
        if torch.get_num_threads() != count:
            torch.set_num_threads(count)
        position, span = index - self._start, TRIAL_BLOCK * len(self.steps.trial)
        if index and 0 <= position < span:
            return self._tried(count, position, span, work)
        if index == 0 or not self.tried_s or count == min(self.tried_s):
            return work()
        start = time.perf_counter()
        out = work()
        self._watch(index, time.perf_counter() - start)
        return out

    def _tried(self, count: int, position: int, span: int, work: Callable[[], T]) -> T:
        if position % TRIAL_BLOCK == 0:
            return work()  # the first step on a count is not timed: the pool wakes
        start = time.perf_counter()
        out = work()
        self._times.setdefault(count, []).append(time.perf_counter() - start)
        if position == span - 1:
            self._settle()
        return out

    def _watch(self, index: int, seconds: float) -> None:
        """A step between trials on more threads than the fewest tried: SLOW_STEPS in a row slower than
        SLOW_FACTOR times the fewest's tried step, and the steps go to the fewest until the next trial."""
        fewest = min(self.tried_s)
        self._slow = self._slow + 1 if seconds > SLOW_FACTOR * self.tried_s[fewest] else 0
        if self._slow >= SLOW_STEPS:
            self.settled, self._slow = fewest, 0
            self.fell_back.append(index)

    def _settle(self) -> None:
        self.tried_s = {n: statistics.median(t) for n, t in self._times.items()}
        self.settled = min(self.tried_s, key=self.tried_s.get)
        self._times.clear()
        self.trials += 1
        self._slow = 0
        self._start = max(TRIAL_AGAIN, 2 * self._start)

    @contextmanager
    def prefilling(self) -> Iterator[None]:
        """The encoder's pass (before step 0) on the prefill's count; torch's count comes back after."""
        with torch_threads(self.prefill.threads):
            yield

    @property
    def threads(self) -> int:
        """The count the steps run on between trials (the last trial's winner once one has finished)."""
        return self.settled or self.steps.threads

    def to_dict(self) -> dict[str, Any]:
        """The steps' choice (`threads`: the count the last trial settled on, or the fewest it fell back to), the
        prefill's, what the last trial timed, and the steps at which slow steps sent the run to the fewest."""
        return {**self.steps.to_dict(), "threads": self.threads, "prefill": self.prefill.to_dict(),
                "trials": self.trials, "tried_ms": {str(n): round(s * 1e3, 4) for n, s in self.tried_s.items()},
                "fell_back_at": list(self.fell_back)}
