"""A tiny model over a small vocabulary, and its ids, for the generation tests."""

from __future__ import annotations

import torch

from tui_lab import ModelConfig, build_model

VOCAB = 40


def tiny(family: str = "decoder-only", positions: str = "learned", norm_position: str = "pre", **kw) -> ModelConfig:
    layers = {"encoder_layers": 2, "decoder_layers": 2} if family == "encoder-decoder" else {"decoder_layers": 2}
    fields = dict(family=family, d_model=32, heads=4, d_ff=64, vocab=VOCAB, max_len=48, positions=positions,
                  norm_position=norm_position, final_norm=norm_position == "pre", dropout=0.1, **layers)
    return ModelConfig(**{**fields, **kw})


def model_for(config: ModelConfig, seed: int = 0):
    torch.manual_seed(seed)
    return build_model(config)


def ids(rows: int, length: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(VOCAB, (rows, length), generator=torch.Generator().manual_seed(seed))

