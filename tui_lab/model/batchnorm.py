"""Batch normalisation over tokens (norm 'batchnorm'): the contrast seed 002 draws with LayerNorm.

LayerNorm averages over the E features of one token; BatchNorm (Ioffe & Szegedy 2015) averages each feature
over every token of the batch, the (N, L) plane. Padding is not text, so its positions are left out of the
statistics: the module takes the (N, L) keep mask (True on real tokens) beside x. In eval mode it uses
running averages instead, so each token is normalised on its own: eval outputs do not depend on the batch,
the padding or the other positions, and cached generation matches the uncached pass.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class MaskedBatchNorm(nn.Module):
    """Per-feature mean and variance over the real tokens of (N, L, E); weight (and bias) as LayerNorm's."""

    def __init__(self, d_model: int, eps: float = 1e-5, bias: bool = True, momentum: float = 0.1) -> None:
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model)) if bias else None
        # Buffers, not parameters: nothing trains them and the parameter count leaves them out.
        self.register_buffer("running_mean", torch.zeros(d_model))
        self.register_buffer("running_var", torch.ones(d_model))

    def forward(self, x: Tensor, keep: Tensor | None = None) -> Tensor:  # (N, L, E), keep (N, L) -> (N, L, E)
        if self.training:
            mean, var = self._batch_stats(x, keep)
        else:
            mean, var = self.running_mean, self.running_var
        out = (x - mean) * torch.rsqrt(var + self.eps) * self.weight
        return out + self.bias if self.bias is not None else out

    def _batch_stats(self, x: Tensor, keep: Tensor | None) -> tuple[Tensor, Tensor]:
        tokens = x.reshape(-1, x.shape[-1])  # (N*L, E)
        if keep is not None and keep.shape == x.shape[:2]:  # a cache's longer key mask cannot be this one
            tokens = tokens[keep.reshape(-1)]  # (real tokens, E)
        n = tokens.shape[0]
        mean, var = tokens.mean(0), tokens.var(0, unbiased=False)
        with torch.no_grad():  # running variance unbiased, as torch.nn.BatchNorm1d keeps it
            unbiased = var * n / max(n - 1, 1)
            self.running_mean.lerp_(mean.detach().to(self.running_mean.dtype), self.momentum)
            self.running_var.lerp_(unbiased.detach().to(self.running_var.dtype), self.momentum)
        return mean, var


def with_keep(norm: nn.Module, keep: Tensor | None):
    """`norm` as a one-argument callable; a batchnorm gets the (N, L) keep mask bound to it."""
    if keep is None or not isinstance(norm, MaskedBatchNorm):
        return norm
    return lambda x: norm(x, keep)


def keep_from_allowed(allowed: Tensor | None) -> Tensor | None:
    """A block's key-padding mask (N, 1, 1, L) back to the (N, L) keep mask it was made from."""
    return allowed[:, 0, 0, :] if allowed is not None and allowed.dim() == 4 else None
