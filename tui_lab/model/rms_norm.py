"""RMSNorm whose training pass is cheaper: torch's forward, bit for bit, and its backward in closed form.

nn.RMSNorm on a CPU is torch's composite (pow, mean, add, rsqrt, two muls): autograd chains each op's backward,
about ten small kernels and as many fresh (N, L, E) buffers per norm per step, and at a toy's size each costs more
than its arithmetic. With x̂ = x·r, r = (mean(x²) + ε)^-½, y = x̂·w, the gradients are
    dw = Σ g·x̂,    dx = r·(g·w − x̂·mean(g·w·x̂))
four kernels. The output is the composite's; the gradients agree with autograd's to float rounding.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, eps: float) -> Tensor:
        rstd = x.pow(2).mean(-1, keepdim=True).add_(eps).rsqrt_()  # the composite's order: the same bits
        normed = x * rstd
        ctx.save_for_backward(normed, rstd, weight)
        return normed * weight

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        normed, rstd, weight = ctx.saved_tensors
        d_weight = (grad * normed).flatten(0, -2).sum(0) if ctx.needs_input_grad[1] else None
        if not ctx.needs_input_grad[0]:
            return None, d_weight, None
        d_normed = grad * weight
        d_x = d_normed.sub_(normed * (d_normed * normed).mean(-1, keepdim=True)).mul_(rstd)
        return d_x, d_weight, None


class RMSNorm(nn.RMSNorm):
    """nn.RMSNorm (its parameters, state dict and forward), with the closed-form backward in a float32 training
    pass; every other pass (no grad, half precision, no weight) is torch's own."""

    def forward(self, x: Tensor) -> Tensor:
        if (self.weight is None or x.dtype != torch.float32 or self.weight.dtype != torch.float32
                or not torch.is_grad_enabled() or not (x.requires_grad or self.weight.requires_grad)):
            return super().forward(x)
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        return _RMSNorm.apply(x, self.weight, eps)
