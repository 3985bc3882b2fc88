"""What a run is built from: the model config it really trains, the optimizer, the data source."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tui_lab.config import ModelConfig
from tui_lab.train.config import TrainConfig
from tui_lab.train.sources import LMSource, Seq2SeqSource

# Fine-tuning pretrained weights (`tui-lab train --from-hf`): a learning rate ~30x below training from scratch
# (3e-3 would undo GPT-2's pretraining within a few steps), and small steps: GPT-2 small costs about
# 6 x 124M FLOPs per token, and a step of 8 x 128 tokens took 53-60 s on a shared 2-core CPU (18 tokens/s).
FINETUNE_DEFAULTS: dict[str, Any] = dict(steps=100, batch_size=8, seq_len=128, lr=1e-4, schedule="cosine",
                                         warmup=10, min_lr=1e-5, weight_decay=0.01, eval_every=50,
                                         sample_every=50)


def fit_model_config(config: ModelConfig, c: TrainConfig, source,
                     keep_vocab: bool = False) -> tuple[ModelConfig, list[str]]:
    """The config the run really trains: vocab from the tokenizer, dropout if overridden, checked.

    `keep_vocab`: the weights are given (a pretrained model, a resumed run), so the embedding's rows are
    the model's; its vocab stays and the tokenizer must fit inside it (GPT-2 folders often pad the vocab).
    """
    if source.tokenizer is None:  # images: no vocabulary to fit, but the task's shape must match
        return _fit_image_config(config, c, source)
    notes, changes = [], {}
    vocab, kind = source.tokenizer.vocab_size, source.tokenizer.kind
    if keep_vocab and vocab > config.vocab:
        raise ValueError(f"vocab: the {kind} tokenizer has {vocab} tokens but the given model's vocab is "
                         f"{config.vocab}; train with the tokenizer the weights were trained with")
    if not keep_vocab and config.vocab != vocab:
        changes["vocab"] = vocab
        notes.append(f"vocab set to {vocab} from the {kind} tokenizer (the config said {config.vocab})")
    if c.dropout is not None and c.dropout != config.dropout:
        changes["dropout"] = c.dropout
        notes.append(f"dropout set to {c.dropout} (the model config said {config.dropout})")
    config = config.replace(**changes) if changes else config
    want = "encoder-decoder" if source.is_seq2seq else getattr(source, "family", "decoder-only")
    if config.family != want:
        what = f"task {c.task!r}" if source.is_seq2seq else getattr(source, "objective", "language modelling")
        raise ValueError(f"{what} needs a {want} model; {config.name!r} is {config.family}")
    length = source.context()
    if config.positions == "learned" and length > config.max_len:
        fix = "lower seq_len (the given weights fix max_len)" if keep_vocab else "lower seq_len or raise max_len"
        raise ValueError(f"seq_len ({length}) must be at most the model's max_len ({config.max_len}) with "
                         f"learned positions; {fix}")
    return config, notes


def _fit_image_config(config: ModelConfig, c: TrainConfig, source) -> tuple[ModelConfig, list[str]]:
    if config.input != "patches":
        raise ValueError(f"{source.objective} needs input 'patches'; {config.name!r} reads tokens")
    source.check(config)
    notes = []
    if c.dropout is not None and c.dropout != config.dropout:
        config = config.replace(dropout=c.dropout)
        notes.append(f"dropout set to {c.dropout} (the model config said {config.dropout})")
    return config, notes


def given_config(model: nn.Module, model_config: ModelConfig | None, data: Any, tokenizer: Any) -> ModelConfig:
    """The config of starting weights handed to a Trainer, checked against what came with them."""
    if model_config is not None and model_config != model.config:
        raise ValueError("model_config: with starting weights (model=) give None or the model's own config")
    if data is None and tokenizer is None:
        raise ValueError("tokenizer: starting weights (model=) need the tokenizer they were trained with "
                         "(tokenizer= or data=)")
    return model.config


def starting_model(model: nn.Module, config: ModelConfig, device: str) -> nn.Module:
    """The run's model from given weights: that model itself (trained in place) when its config is the
    run's, else a build of the run's config (a changed dropout) with the weights copied in."""
    if model.config == config:
        return model.to(device)
    from tui_lab.model import build_model

    fresh = build_model(config, device=device)
    fresh.load_state_dict(model.state_dict())  # same names and shapes: only dropout may differ
    return fresh


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
