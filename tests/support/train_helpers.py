"""Tiny configs and data shared by the training tests (kept small: the tests share 2 CPU cores)."""

from __future__ import annotations

from tui_lab.config import ModelConfig
from tui_lab.data import char_tokenizer, lm_data
from tui_lab.train import TrainConfig

TEXT = (
    "The quick brown fox jumps over the lazy dog. A small cat sat on the warm mat and watched the rain. "
    "Every morning the baker opened his shop and the smell of bread filled the street. "
) * 20


def tiny_lm(dropout: float = 0.1, **changes) -> ModelConfig:
    return ModelConfig(name="tiny-lm", family="decoder-only", decoder_layers=2, d_model=32, heads=2, d_ff=64,
                       vocab=64, max_len=64, dropout=dropout).replace(**changes)


def tiny_seq2seq(**changes) -> ModelConfig:
    return ModelConfig(name="tiny-s2s", family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=32,
                       heads=2, d_ff=64, vocab=64, max_len=64, norm_position="pre", positions="sinusoidal",
                       dropout=0.0).replace(**changes)


def lm_config(**changes) -> TrainConfig:
    base = dict(steps=20, batch_size=8, seq_len=32, lr=3e-3, schedule="cosine", warmup=5, eval_every=10,
                eval_batches=2, sample_every=0)
    return TrainConfig(**(base | changes))


def small_lm_data():
    return lm_data(TEXT, char_tokenizer(TEXT), 0.1)
