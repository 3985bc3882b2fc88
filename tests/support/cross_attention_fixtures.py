"""A tiny monotonic cross-attention checkpoint, shared by the Pilot test (test_app_guided_cross.py) and the walk
(test_walk_guided_cross.py)."""

from __future__ import annotations

import torch

from tui_lab import build_model
from tui_lab.checkpoint import save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data.tasks import load_task


def monotonic_checkpoint(folder, positions: str = "sinusoidal") -> None:
    """A numbers-de model whose monotonic heads stop somewhere (random weights with r = 0.5 and wide queries)."""
    tokenizer = load_task("numbers-de").tokenizer
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16, heads=2,
                         d_ff=32, vocab=tokenizer.vocab_size, max_len=32, positions=positions,
                         cross_attention="monotonic")
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        model.decoder[0].cross.r.fill_(0.5)
        model.decoder[0].cross.q.weight.normal_(std=0.5)
    save_checkpoint(folder, model, tokenizer)
