"""The evaluation text the mechanism tools measure on: a prompt, or held-out windows of a corpus."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from tui_lab.data.corpus import builtin_corpus, read_text
from tui_lab.data.lm import lm_data


def held_out_batch(codec: Any, seq_len: int, batch: int, path: str | None = None) -> Tensor:
    """(N, L): the first `batch` windows of `seq_len` tokens of the validation split (the last 10% of the
    tokens, as `tui-lab train` holds out) of the built-in corpus, or of the text file `path`."""
    if seq_len < 2:
        raise ValueError(f"seq_len must be at least 2 (the loss predicts the next token), got {seq_len}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    val = lm_data(read_text(path) if path else builtin_corpus(), codec).val
    rows = min(batch, len(val) // seq_len)
    if rows < 1:
        raise ValueError(f"seq_len: {seq_len} tokens is longer than the held-out split ({len(val)} tokens)")
    return val[: rows * seq_len].view(rows, seq_len)


def text_batch(codec: Any, text: str, max_len: int, field: str = "text") -> Tensor:
    """(1, L): one text's ids, refused when it is empty or past the model's window."""
    ids = codec.encode(text)
    if not ids:
        raise ValueError(f"{field} is empty after tokenizing")
    if max_len and len(ids) > max_len:
        raise ValueError(f"{field} is {len(ids)} tokens; this model reads at most {max_len}")
    return torch.tensor([ids])


def text_windows(codec: Any, text: str, seq_len: int, batch: int, field: str) -> Tensor:
    """(N, L): up to `batch` windows of `seq_len` tokens from the start of `text` (all of it, no split)."""
    ids = codec.encode(text)
    rows = min(batch, len(ids) // seq_len)
    if rows < 1:
        raise ValueError(f"{field}: {len(ids)} tokens, fewer than one window of {seq_len}")
    return torch.tensor(ids[: rows * seq_len]).view(rows, seq_len)
