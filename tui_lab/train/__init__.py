"""The training engine: one Trainer for both families, driven headless or by the app through events."""

from tui_lab.train.config import TrainConfig, defaults_for, train_config_for
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
from tui_lab.train.trainer import Trainer

__all__ = [
    "CheckpointEvent",
    "DoneEvent",
    "ErrorEvent",
    "EvalEvent",
    "Event",
    "SampleEvent",
    "StartEvent",
    "StepEvent",
    "StoppedEvent",
    "TrainConfig",
    "Trainer",
    "defaults_for",
    "train_config_for",
]
