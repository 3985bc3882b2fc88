"""Approximate self-attention at typing speed (80 x 24, busy CPU): the Speed view's r on a Linformer encoder
says in one line why there is no decoding to measure."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.checkpoint import save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data import char_tokenizer

pytestmark = pytest.mark.walk

LINFORMER = ModelConfig(family="encoder-only", encoder_layers=1, decoder_layers=0, d_model=32, heads=4, d_ff=64,
                        vocab=32, max_len=64, dropout=0.0, self_attention="linformer", linformer_k=16)


def test_speed_r_on_a_linformer_says_why_it_has_no_decoding(walk, tmp_path):
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "linformer", build_model(LINFORMER), char_tokenizer("abcdefghijklmnopqrstuvwxyz ."))
    w = walk("--checkpoint", str(tmp_path / "linformer"))
    w.wait_for(f"{count_params(LINFORMER).total:,} parameters", timeout=40)  # the form holds the live model
    w.press("6")
    w.wait_for("r run", timeout=15)
    w.press("r")
    screen = w.wait_for("has no decoding to measure", timeout=15)
    assert "self_attention 'linformer'" in screen
