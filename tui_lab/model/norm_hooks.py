"""A norm's hook points, `hook_scale` and `hook_normalized`, as TransformerLens names them on ln1, ln2, ln_final.

`hook_scale` (N, L, 1) is what the norm divides by: sqrt(var + eps) of the input for LayerNorm (after centring),
sqrt(mean(x^2) + eps) for RMSNorm. `hook_normalized` (N, L, E) is the norm's output, what the next sublayer reads
(gamma and beta applied; TransformerLens's value under its default fold_ln, where gamma is 1 and beta 0).
Reading either leaves the pass bit for bit as it was (the module computes the output); a replaced scale is used:
the output is then recomputed from it. A batchnorm has no per-token scale: only its `hook_normalized`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from tui_lab.model.hooks import HookScope

SCALED = (nn.LayerNorm, nn.RMSNorm)


def norm_scale(norm: nn.Module, x: Tensor) -> Tensor:
    """(..., 1): what `norm` divides x (..., E) by."""
    if isinstance(norm, nn.LayerNorm):
        return (x.var(dim=-1, keepdim=True, unbiased=False) + norm.eps).sqrt()
    eps = norm.eps if norm.eps is not None else torch.finfo(x.dtype).eps
    return (x.pow(2).mean(dim=-1, keepdim=True) + eps).sqrt()


def with_scale(norm: nn.Module, x: Tensor, scale: Tensor) -> Tensor:
    """`norm`'s output for x with the scale `scale` in place of its own."""
    centred = x - x.mean(dim=-1, keepdim=True) if isinstance(norm, nn.LayerNorm) else x
    out = centred / scale
    if norm.weight is not None:
        out = out * norm.weight
    return out + norm.bias if getattr(norm, "bias", None) is not None else out


def hooked_norm(norm: nn.Module, apply: Callable[[Tensor], Tensor], hooks: HookScope | None
                ) -> Callable[[Tensor], Tensor]:
    """`apply` (the norm as the block calls it) passing the points of `hooks` (the norm's scope, e.g. "ln1."),
    or `apply` itself when nothing is attached there."""
    if hooks is None:
        return apply

    def run(x: Tensor) -> Tensor:
        out = apply(x)
        if isinstance(norm, SCALED) and hooks.wants("hook_scale"):
            scale = norm_scale(norm, x)
            new = hooks("hook_scale", scale)
            if new is not scale:
                out = with_scale(norm, x, new)
        return hooks("hook_normalized", out)

    return run
