"""The one message a training run posts to the Train view, and the estimate it asks with before a long run.

Posted from the session's reader thread (`tui_lab.app.views.train.session`), it carries what the trainer
said as the core's own type (`tui_lab.train.events`) and names its run, so a view drops what an older run
still sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

# The share of the measured matmul peak a training step reaches, for the estimate shown before a run starts:
# in-app runs measured 36-51% MFU on CPU (issue 9).
ASSUMED_MFU = 0.4


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


class RunSaid(Message):
    """What run number `run`'s trainer said: one of `tui_lab.train.events`' types, as the trainer sent it
    (Ready, an engine event, Alignment, Ended, Failed). The Train view dispatches on its type."""

    bubble = False  # only the Train view handles it: bubbling costs a dispatch per ancestor, per step

    def __init__(self, run: int, said: Any) -> None:
        super().__init__()
        self.run, self.said = run, said
