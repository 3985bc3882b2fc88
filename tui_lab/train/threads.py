"""Torch's thread count for a training run: chosen by `tui_lab.cpu_threads` at the start and again every
RECHOOSE_S between steps, so a run follows the machine's load as it changes (issue 39: training used to take
every core whatever the load). The grain is a step's largest op over its tokens (batch x window).

Used by `tui-lab train` (the CLI) and the app's trainer process (train/process_child.py); a count given
by the caller (TrainerSpec.threads) or TUI_LAB_TRAIN_THREADS is kept as it is. Off the CPU nothing changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tui_lab.cpu_threads import Choice, ceiling_threads, choose, op_grain

RECHOOSE_S = 5.0  # a step boundary at least this long after the last choice chooses again (~15 ms to read)
FORCED_BY = "TUI_LAB_TRAIN_THREADS"


class TrainThreads:
    """The run's thread count, chosen now and again between steps."""

    def __init__(self, trainer: Any) -> None:
        from tui_lab.train.watch import tokens_per_step

        self.on_cpu = str(trainer.device).startswith("cpu")
        self.grain = op_grain(trainer.model_config, tokens_per_step(trainer))
        self.ceiling = ceiling_threads()  # taken once: the count set below must not lower it
        self.choice: Choice | None = None
        self.chosen_at = 0.0

    def apply(self) -> Choice | None:
        """Choose and set torch's count (None off the CPU)."""
        if not self.on_cpu:
            return None
        import torch

        self.choice, self.chosen_at = choose(self.grain, self.ceiling, FORCED_BY), time.monotonic()
        if torch.get_num_threads() != self.choice.threads:
            torch.set_num_threads(self.choice.threads)
        return self.choice

    def between_steps(self) -> None:
        """Called at a step boundary (the training thread): choose again once RECHOOSE_S has passed."""
        if self.choice is not None and time.monotonic() - self.chosen_at >= RECHOOSE_S:
            self.apply()

    def follow(self, on_event: Callable[[Any], None] | None) -> Callable[[Any], None]:
        """`on_event` that also chooses again after step events."""

        def handler(event: Any) -> None:
            if on_event is not None:
                on_event(event)
            if getattr(event, "kind", None) == "step":
                self.between_steps()

        return handler
