"""What a run is built from: the model config it really trains, the optimizer, the data source."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tui_lab.config import ModelConfig
from tui_lab.train.config import TrainConfig
from tui_lab.train.sources import LMSource, Seq2SeqSource


def fit_model_config(config: ModelConfig, c: TrainConfig, source) -> tuple[ModelConfig, list[str]]:
    """The config the run really trains: vocab from the tokenizer, dropout if overridden, checked."""
    notes, changes = [], {}
    vocab = source.tokenizer.vocab_size
    if config.vocab != vocab:
        changes["vocab"] = vocab
        kind = source.tokenizer.kind
        notes.append(f"vocab set to {vocab} from the {kind} tokenizer (the config said {config.vocab})")
    if c.dropout is not None and c.dropout != config.dropout:
        changes["dropout"] = c.dropout
        notes.append(f"dropout set to {c.dropout} (the model config said {config.dropout})")
    config = config.replace(**changes) if changes else config
    want = "encoder-decoder" if source.is_seq2seq else "decoder-only"
    if config.family != want:
        what = f"task {c.task!r}" if source.is_seq2seq else "language modelling"
        raise ValueError(f"{what} needs a {want} model; {config.name!r} is {config.family}")
    length = source.context()
    if config.positions == "learned" and length > config.max_len:
        raise ValueError(f"seq_len ({length}) must be at most the model's max_len ({config.max_len}) with "
                         "learned positions; lower seq_len or raise max_len")
    return config, notes


def make_optimizer(model: nn.Module, c: TrainConfig, device: str) -> torch.optim.AdamW:
    """AdamW with decay on matrices only (not biases or norms); fused where torch has it (much faster here)."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": c.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    kwargs = dict(lr=c.lr, betas=c.betas, eps=c.eps)
    if device.split(":")[0] in ("cpu", "cuda"):
        try:
            return torch.optim.AdamW(groups, fused=True, **kwargs)
        except (RuntimeError, TypeError):
            pass
    return torch.optim.AdamW(groups, **kwargs)


def as_source(data: Any, c: TrainConfig):
    """Accept a ready source, an LMData, or a Seq2SeqTask."""
    if isinstance(data, (LMSource, Seq2SeqSource)):
        return data
    if hasattr(data, "examples"):
        return Seq2SeqSource(data)
    return LMSource(data, c.seq_len)
