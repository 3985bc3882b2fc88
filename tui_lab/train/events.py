"""What a training run reports, as small dataclasses the CLI prints and the app turns into widgets.

Every event has `to_dict()` with an "event" key; fields that do not apply (exact match for a language
model, a val loss before the first evaluation) are left out rather than sent as null.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


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
