"""The Attention view's relative-position grid at typing speed: a T5-positions checkpoint opens, `2` then `k`
reach the bias grid over query x key positions (issue 27)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.checkpoint import save_checkpoint
from tui_lab.data.corpus import builtin_corpus
from tui_lab.data.tokenizers import char_tokenizer
from tui_lab.presets import load_preset

pytestmark = pytest.mark.walk


def test_k_reaches_the_t5_bias_grid(walk, tmp_path):
    tokenizer = char_tokenizer(builtin_corpus())
    config = load_preset("gpt2-toy", positions="t5", vocab=tokenizer.vocab_size)
    torch.manual_seed(0)
    folder = save_checkpoint(tmp_path / "t5-toy", build_model(config).eval(), tokenizer)
    w = walk("--checkpoint", str(folder))
    w.wait_for("t5-toy", timeout=40)  # the checkpoint is the live model
    w.press("2")
    w.wait_for(lambda s: "k grid" in s.rstrip("\n").split("\n")[-1], timeout=15)
    w.wait_for("decoder masked self-attention", timeout=20)
    w.press("k")
    w.wait_for("positions: T5 bias", timeout=10)
