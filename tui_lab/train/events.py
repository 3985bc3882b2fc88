"""What a training run reports, as small dataclasses of plain data: the CLI prints them, a trainer process
sends them to its parent as they are (pickled through its queue), and the app's Train view receives them
wrapped in one Textual message (`RunSaid`), never declared again.

The engine's events (start, step, eval, sample, done, stopped, error, checkpoint) have `to_dict()` with an
"event" key, fields that do not apply left out rather than sent as null; `event_from_dict` reads them back
through the one table, `EVENT_TYPES`. Below them, what only a trainer process says: ready (the Trainer is
built), the weights' shared buffers, an alignment grid, a snapshot taken, a reply to a save, a note, the run
ended, the run could not start.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tui_lab.config import ModelConfig


@dataclass
class Event:
    step: int

    kind = "event"

    def to_dict(self) -> dict[str, Any]:
        data = {"event": self.kind}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                data[f.name] = value
        return data


@dataclass
class StartEvent(Event):
    """The run as it really is: the model config after the tokenizer set its vocab, sizes, device."""

    total_steps: int
    model: dict[str, Any]
    train: dict[str, Any]
    params: int
    device: str
    world_size: int = 1
    notes: list[str] = field(default_factory=list)
    kind = "start"


@dataclass
class StepEvent(Event):
    train_loss: float
    lr: float
    grad_norm: float
    layer_grad_norms: dict[str, float]
    tokens: int  # this step's (global) batch: LM N x L; seq2seq real source + target tokens, no padding
    tokens_per_s: float  # over every step this process ran so far (not this step alone): docs/CONTRACTS.md
    mfu: float  # model FLOP/s over the same steps / the matmul peak kept for this device (hardware.py)
    step_s: float
    # seq2seq only (absent for a language model): p_i, the probability the step fed the gold previous token
    # (1.0 without scheduled sampling), and the guided-attention penalty per target token (only when it is on;
    # train_loss stays the cross-entropy alone, so runs with and without it compare).
    teacher_forcing: float | None = None
    guided_attention_loss: float | None = None
    # Mixture-of-experts runs only: the router's load-balancing loss (before router_aux_loss_coef; the step
    # minimised train_loss + coef * aux_loss) and how many tokens each layer routed to each expert.
    aux_loss: float | None = None
    expert_load: list[list[int]] | None = None  # (layers, experts), the step's global batch
    kind = "step"


@dataclass
class EvalEvent(Event):
    val_loss: float
    exact_match: float | None = None
    masked_accuracy: float | None = None  # MLM: argmax == original on the masked positions, held out
    baseline_accuracy: float | None = None  # MLM: always the most frequent training token
    unigram_accuracy: float | None = None  # MLM: a draw from the training text's unigram distribution
    accuracy: float | None = None  # image classification: held-out accuracy (baseline: the majority class)
    kind = "eval"


@dataclass
class SampleEvent(Event):
    text: str  # the completion (language model) or the greedy translation (seq2seq)
    prompt: str = ""
    target: str | None = None
    kind = "sample"


@dataclass
class DoneEvent(Event):
    train_loss: float | None
    val_loss: float | None
    tokens_per_s: float  # the same window as the last step event's, so the two agree
    exact_match: float | None = None
    mfu: float | None = None
    checkpoint: str | None = None  # the folder the run was saved to; absent when it was not saved
    masked_accuracy: float | None = None  # MLM, from the last evaluation, with its baselines
    baseline_accuracy: float | None = None
    unigram_accuracy: float | None = None
    accuracy: float | None = None
    kind = "done"


@dataclass
class StoppedEvent(Event):
    train_loss: float | None = None
    val_loss: float | None = None
    checkpoint: str | None = None
    kind = "stopped"


@dataclass
class ErrorEvent(Event):
    message: str
    kind = "error"


@dataclass
class CheckpointEvent(Event):
    path: str
    kind = "checkpoint"


EVENT_TYPES = {cls.kind: cls for cls in (StartEvent, StepEvent, EvalEvent, SampleEvent, DoneEvent, StoppedEvent,
                                         ErrorEvent, CheckpointEvent)}


def event_from_dict(data: dict[str, Any]) -> Event:
    """The inverse of `Event.to_dict()` (fields it left out because they were None come back as None)."""
    cls = EVENT_TYPES[data["event"]]
    return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


# -- what a trainer process says besides the engine's events (tui_lab/train/process.py) --------------------
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
class Note:
    text: str  # something the run went on without (its keeping skipped: the quota), one line
    kind = "note"


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
