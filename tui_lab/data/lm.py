"""Language-model data: one token stream split into train and validation, read as random windows.

The split is contiguous (the first 1 - val_fraction of the tokens train, the rest validate), so no
validation window overlaps a training window except across the single boundary. Each batch row is a
window of seq_len + 1 tokens; x is its first seq_len tokens and y the last seq_len, so y[t] is the
token that follows x[..t] (the 'targets are the inputs shifted by one' of next-token prediction).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from tui_lab.data.tokenizers import Tokenizer

SPLITS = ("train", "val")


@dataclass
class LMData:
    """A tokenizer and its two 1-D long tensors of token ids."""

    tokenizer: Tokenizer
    train: Tensor  # (T_train,) long
    val: Tensor  # (T_val,) long

    def split(self, name: str) -> Tensor:
        if name not in SPLITS:
            raise ValueError(f"split: must be one of {', '.join(SPLITS)}, got {name!r}")
        return self.train if name == "train" else self.val

    def batch(
        self, split: str, batch_size: int, seq_len: int, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        """(x, y), both (N, L) long: random windows of L + 1 tokens, y = x shifted left by one."""
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        if seq_len < 1:
            raise ValueError(f"seq_len: must be at least 1, got {seq_len}")
        data = self.split(split)
        if len(data) < seq_len + 1:
            raise ValueError(
                f"seq_len: {seq_len} needs {seq_len + 1} tokens but the {split} split has {len(data)}; "
                "use a shorter seq_len or more text"
            )
        starts = torch.randint(len(data) - seq_len, (batch_size,), generator=generator)  # (N,)
        windows = data[starts[:, None] + torch.arange(seq_len + 1)]  # (N, L + 1)
        return windows[:, :-1], windows[:, 1:]


def lm_data(text: str, tokenizer: Tokenizer, val_fraction: float = 0.1) -> LMData:
    """Encode `text` once and split it: the last `val_fraction` of the tokens is the validation split."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction: must be between 0 and 1 (exclusive), got {val_fraction}")
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)  # (T,)
    n_val = int(round(len(ids) * val_fraction))
    if len(ids) < 2 or n_val < 1 or n_val >= len(ids):
        raise ValueError(f"text: {len(ids)} tokens are too few to split into train and validation")
    return LMData(tokenizer, ids[:-n_val], ids[-n_val:])
