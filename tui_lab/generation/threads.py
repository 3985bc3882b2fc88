"""How many CPU threads decoding runs on: chosen for each call by `tui_lab.cpu_threads`, restored after.

Decoding at batch 1 is many tiny ops; OpenMP threads then cost more in hand-offs than they give, and on a
busy machine far more (gpt2-toy's cached step took ~1.2 ms on 1 thread and 1-80 ms on torch's 2 at load
7-12). The choice was once measured per path and kept; a kept choice goes stale as the load changes
(issue 39: 20-80x slower), so it is now the rule in `cpu_threads.choose`, applied at each call: the call's
largest op (its grain) and the cores others leave free now. The ceiling is torch's current count (a count a
person set with OMP_NUM_THREADS or torch.set_num_threads stays the ceiling). `TUI_LAB_DECODE_THREADS=N`
forces N (for measuring). Devices other than the CPU keep torch's setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from tui_lab.cpu_threads import Choice, choose, op_grain
from tui_lab.model import Transformer

UNCACHED_CONTEXT = 128  # the tokens an uncached pass is sized at (its passes grow; this is a typical one)
FORCED_BY = "TUI_LAB_DECODE_THREADS"


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

