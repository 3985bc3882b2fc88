"""Learning-rate schedules as pure functions of the step, so a resumed run needs only the step count.

`step` counts optimizer updates from 0; the rate returned is the one used for update `step`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tui_lab.train.config import TrainConfig


def noam(step: int, c: TrainConfig, d_model: int, total: int) -> float:
    """2017 paper, section 5.3: lr * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5), s = step + 1."""
    s = step + 1
    return c.lr * d_model**-0.5 * min(s**-0.5, s * c.warmup**-1.5)


def cosine(step: int, c: TrainConfig, d_model: int, total: int) -> float:
    """Linear warmup to lr, then half a cosine down to min_lr at the last step (GPT-2/3 practice)."""
    if step < c.warmup:
        return c.lr * (step + 1) / c.warmup
    span = max(1, total - c.warmup)
    progress = min(1.0, (step - c.warmup) / span)
    return c.min_lr + 0.5 * (c.lr - c.min_lr) * (1 + math.cos(math.pi * progress))


def constant(step: int, c: TrainConfig, d_model: int, total: int) -> float:
    """lr throughout, after a linear warmup when warmup > 0."""
    return c.lr * min(1.0, (step + 1) / c.warmup) if c.warmup else c.lr


SCHEDULE_FUNCTIONS: dict[str, Callable[[int, TrainConfig, int, int], float]] = {
    "noam": noam,
    "cosine": cosine,
    "constant": constant,
}


def learning_rate(step: int, c: TrainConfig, d_model: int) -> float:
    return SCHEDULE_FUNCTIONS[c.schedule](step, c, d_model, c.steps)
