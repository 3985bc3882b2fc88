"""What the Train view says before a run steps: the estimate (and whether to ask), and a vocabulary swap."""

from __future__ import annotations

from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig

# Runs estimated longer than this ask first. The estimate can be 2x off either way (a shared machine measures a
# low peak), so the bar sits where a miss still means "long": the default toy run (~3-7 min) starts at once,
# the 2017 base on numbers-de (~25-60 min on 2 CPU cores) asks.
CONFIRM_AFTER_S = 600.0


def fmt_duration(seconds: float) -> str:
    minutes = seconds / 60
    if minutes < 1:
        return f"{seconds:.0f} s"
    if minutes < 90:
        return f"{minutes:.0f} min"
    return f"{minutes / 60:.1f} h"


def confirm_text(run: int, estimate, device: str) -> str | None:
    """The question to ask before a run estimated over CONFIRM_AFTER_S, or None for a short run."""
    if estimate is None or estimate.seconds <= CONFIRM_AFTER_S:
        return None
    return (f"Run #{run} will take about {fmt_duration(estimate.seconds)} on {device} (ETA, estimated: "
            f"{estimate.describe()}).\nFewer steps, a smaller batch or a toy preset train in seconds. Start it?")


def vocab_note(before: ModelConfig, after: ModelConfig, tokenizer: str) -> str | None:
    """When the run's tokenizer replaces the config's vocabulary: by how much the model changes."""
    if before.vocab == after.vocab:
        return None
    a, b = count_params(before).total, count_params(after).total
    exact = f"{a:,} -> {b:,} parameters"
    short = f"{_short(a)} -> {_short(b)} parameters"
    counts = exact if short == exact else f"{short} ({a:,} -> {b:,})"  # under 1M the short form is the exact one
    return f"the {tokenizer} vocabulary ({after.vocab:,}) replaces the preset's ({before.vocab:,}): {counts}"


def _short(n: int) -> str:
    return f"{n / 1e6:.0f}M" if n >= 10e6 else f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n:,}"
