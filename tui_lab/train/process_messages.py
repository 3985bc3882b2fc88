"""What a trainer process sends back to its parent: small picklable dataclasses of plain data.

Engine events travel as their `to_dict()` and are rebuilt with `event_from_dict`, so the queue carries
data, not live objects. The one exception is `Buffers`: the shared-memory tensors snapshots are written
into, sent once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.train.events import (
    CheckpointEvent,
    DoneEvent,
    ErrorEvent,
    EvalEvent,
    Event,
    SampleEvent,
    StartEvent,
    StepEvent,
    StoppedEvent,
)

EVENT_TYPES = {cls.kind: cls for cls in (StartEvent, StepEvent, EvalEvent, SampleEvent, DoneEvent, StoppedEvent,
                                         ErrorEvent, CheckpointEvent)}


def event_from_dict(data: dict[str, Any]) -> Event:
    """The inverse of `Event.to_dict()` (fields it left out because they were None come back as None)."""
    cls = EVENT_TYPES[data["event"]]
    return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


@dataclass
class Ready:
    """The Trainer is built: the config it really trains and what a watcher needs before the first step."""

    model_config: ModelConfig
    train_config: Any  # the TrainConfig it trains (checked in the child)
    notes: list[str]
    lr_curve: list[tuple[int, float]]
    params: int
    continued: bool  # the run starts from the weights it was given, not fresh ones
    tokens_per_step: int
    flops_per_token: int
    peak_flops: float
    tokenizer: Any
    example: tuple[str, str] | None  # the held-out (source, target) the alignment grid shows
    kind = "ready"


@dataclass
class Buffers:
    tensors: dict[str, Any]  # name -> shared-memory CPU tensor, the shape of the model's state_dict
    kind = "buffers"


@dataclass
class EventMessage:
    event: dict[str, Any]  # Event.to_dict()
    kind = "event"


@dataclass
class Alignment:
    step: int
    grid: list[list[float]]
    rows: list[str]
    cols: list[str]
    kind = "alignment"


@dataclass
class SnapshotReady:
    step: int  # the buffers hold the weights after this many steps
    kind = "snapshot"


@dataclass
class Reply:
    request: int
    path: str | None = None
    error: str | None = None
    kind = "reply"


@dataclass
class Ended:
    outcome: str  # done, stopped or error
    message: str
    step: int
    kind = "ended"


@dataclass
class Failed:
    error: str  # the run could not start (one line)
    kind = "failed"
