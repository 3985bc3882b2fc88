"""Attention masks as pure functions.

The project's one convention: a boolean mask is True where a query MAY attend to a key, the
convention of `F.scaled_dot_product_attention` (the opposite of `nn.MultiheadAttention`, where True
blocks). Padding masks are `(N, L)` and True on real tokens, False on padding.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.mask_rule import may_attend


def causal_mask(q_len: int, k_len: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """(Lq, Lk) bool: query i sees keys 0..i, aligned to the end when the keys include a cache."""
    k_len = q_len if k_len is None else k_len
    q = torch.arange(k_len - q_len, k_len, device=device)[:, None]  # the queries are the last q_len positions
    k = torch.arange(k_len, device=device)[None, :]
    return may_attend(q, k, causal=True)


def padding_mask(lengths: list[int] | Tensor, max_len: int | None = None) -> Tensor:
    """(N, L) bool, True on the first `lengths[n]` positions of each row."""
    lengths = torch.as_tensor(lengths)
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len)[None, :] < lengths[:, None]


def key_padding(keep: Tensor) -> Tensor:
    """(N, Lk) padding mask -> (N, 1, 1, Lk): no query attends to a padded key."""
    return keep[:, None, None, :]


def combine(*masks: Tensor | None) -> Tensor | None:
    """AND of broadcastable masks; None means 'everything allowed'."""
    present = [m for m in masks if m is not None]
    if not present:
        return None
    out = present[0]
    for m in present[1:]:
        out = out & m
    return out


def local_mask(
    q_pos: Tensor, k_pos: Tensor, window: int, causal: bool, global_tokens: int = 0
) -> Tensor:
    """(Lq, Lk) bool: sliding-window attention with optional global tokens, by absolute positions
    (`tui_lab.mask_rule.may_attend` says which pairs)."""
    return may_attend(q_pos[:, None], k_pos[None, :], causal, window, global_tokens)
