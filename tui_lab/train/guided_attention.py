"""Guided attention (Tachibana et al. 2017, section 4.1; seed 002 section 4, Tips 2): a loss that pulls
cross-attention toward a monotonic diagonal.

The penalty grid W[t, s] = 1 - exp(-((s/S - t/T)^2) / (2 g^2)) is 0 on the diagonal s/S = t/T and near 1 far
from it; the loss is sum_t sum_s A[t, s] W[t, s] over each example's real target rows, with S and T that
example's real source and target lengths. A is the cross-attention averaged over the heads and over every
decoder layer (the penalty is linear in A, so this is the mean of each layer's and head's penalty): every
layer is pulled, not only the last one the Train view draws. The trainer divides the sum by the batch's target
tokens, like the cross-entropy, and adds it times the weight `guided_attention`.
Dimension legend: N batch, H heads, T target length, S source length.
"""

from __future__ import annotations

import torch
from torch import Tensor


def diagonal_prior(tgt_lengths: Tensor, src_lengths: Tensor, t_max: int, s_max: int, g: float) -> Tensor:
    """(N, T, S) penalty W per example; 0 where s/S == t/T. Lengths are (N,) real lengths (>= 1)."""
    t = torch.arange(t_max, device=tgt_lengths.device, dtype=torch.float32)[None, :, None]  # (1, T, 1)
    s = torch.arange(s_max, device=tgt_lengths.device, dtype=torch.float32)[None, None, :]  # (1, 1, S)
    big_t = tgt_lengths.float().clamp(min=1)[:, None, None]
    big_s = src_lengths.float().clamp(min=1)[:, None, None]
    return 1.0 - torch.exp(-((s / big_s - t / big_t) ** 2) / (2 * g * g))


def guided_loss_sum(cross: list[Tensor], tgt_real: Tensor, src_real: Tensor | None, g: float) -> Tensor:
    """Summed penalty of the cross-attention grids `cross` (each (N, H, T, S)) over real target rows.

    `tgt_real` (N, T) True on target rows the loss counts; `src_real` (N, S) True on real source tokens
    (None: every source position is real)."""
    attention = torch.stack([w.float().mean(1) for w in cross]).mean(0)  # (N, T, S): heads, then layers
    n, t_max, s_max = attention.shape
    src_lengths = src_real.sum(1) if src_real is not None else torch.full((n,), s_max, device=attention.device)
    prior = diagonal_prior(tgt_real.sum(1), src_lengths, t_max, s_max, g)  # (N, T, S)
    per_row = (attention * prior).sum(-1)  # (N, T)
    return (per_row * tgt_real).sum()


def diagonal_agreement(attention: Tensor, tgt_real: Tensor, src_real: Tensor | None) -> float:
    """Share of real target tokens (eos excluded) whose most-attended source position is the diagonal's,
    floor(t S / T') with T' the target's tokens before eos: on copy, target word t looks at source word t.

    `attention` (N, T, S) (e.g. the last layer's mean of heads). A measure of how monotonic-diagonal the
    alignment is, not of how right: numbers-de's German puts units before tens, so it should not reach 1."""
    n, _, s_max = attention.shape
    words = tgt_real.sum(1) - 1  # (N,) target tokens before eos
    src_lengths = src_real.sum(1) if src_real is not None else torch.full((n,), s_max, device=attention.device)
    t = torch.arange(attention.shape[1], device=attention.device)[None, :]  # (1, T)
    expected = (t * src_lengths[:, None]) // words.clamp(min=1)[:, None]  # (N, T)
    rows = t < words[:, None]
    hits = (attention.argmax(-1) == expected) & rows
    return hits.sum().item() / max(1, rows.sum().item())
