"""The messages a training run posts to the Train view, and the estimate it asks with before a long run.

Posted from the session's reader thread (`tui_lab.app.views.train.session`); each names its run, so a view drops
what an older run still sends. None bubbles: only the Train view handles them, and a bubbling message
costs a dispatch per ancestor, every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from tui_lab.config import ModelConfig

# The share of the measured matmul peak a training step reaches, for the estimate shown before a run starts:
# in-app runs measured 36-51% MFU on CPU (issue 9).
ASSUMED_MFU = 0.4


class TrainReady(Message):
    """The Trainer is built: the config it really trains, the notes (vocab refit...), the lr curve."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, model_config: ModelConfig, notes: list[str], lr_curve: list[tuple[int, float]],
                 params: int, continued: bool, estimate: Estimate | None = None) -> None:
        super().__init__()
        self.run, self.model_config, self.notes, self.lr_curve = run, model_config, notes, lr_curve
        self.params, self.continued, self.estimate = params, continued, estimate


@dataclass(frozen=True)
class Estimate:
    """How long the run should take: its FLOPs over an assumed share of the device's measured matmul peak."""

    steps: int
    tokens_per_step: int
    flops_per_token: int  # training (forward + backward), from tui_lab.analysis
    peak_flops: float

    @property
    def seconds(self) -> float:
        return self.steps * self.tokens_per_step * self.flops_per_token / (self.peak_flops * ASSUMED_MFU)

    def describe(self) -> str:
        return (f"{self.steps:,} steps x {self.tokens_per_step:,} tokens x {self.flops_per_token / 1e6:,.1f} MFLOP"
                f"/token at {ASSUMED_MFU:.0%} of the measured {self.peak_flops / 1e9:,.0f} GFLOP/s peak")


class TrainEvent(Message):
    """One engine event (tui_lab.train.events)."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, event: Any) -> None:
        super().__init__()
        self.run, self.event = run, event


class Alignment(Message):
    """Cross-attention (mean of heads, last decoder layer) of the fixed held-out example."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, step: int, grid: list[list[float]], rows: list[str], cols: list[str]) -> None:
        super().__init__()
        self.run, self.step, self.grid, self.rows, self.cols = run, step, grid, rows, cols


class TrainEnded(Message):
    """The run is over (done, stopped, or an error); the model holds the last good weights."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, model: Any, tokenizer: Any, config: ModelConfig | None, step: int,
                 outcome: str, message: str) -> None:
        super().__init__()
        self.run, self.model, self.tokenizer, self.config = run, model, tokenizer, config
        self.step, self.outcome, self.message = step, outcome, message


class TrainFailed(Message):
    """The run could not start (bad file, a config the task cannot train...)."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, error: str) -> None:
        super().__init__()
        self.run, self.error = run, error

