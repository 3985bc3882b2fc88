"""Scaled dot-product attention itself: the one `attend` every attention kind calls, and the head reshapes.

Apart from the layers (attention.py) so the approximate kinds and the decode step can use it without the layers.
Dimension legend: N batch, H heads, K kv heads (H when multi-head, 1 when multi-query), L/T query length,
S key length, E d_model, D d_head = E / H. Masks follow `masks.py`: True = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from tui_lab.model.masks import causal_mask, combine


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    allowed: Tensor | None = None,
    bias: Tensor | None = None,
    causal: bool = False,
    dropout_p: float = 0.0,
    need_weights: bool = False,
    scale: float | None = None,
    pattern_hook: Callable[[Tensor], Tensor] | None = None,
    scores_hook: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor | None]:
    """softmax(q k^T / sqrt(D) + bias) v over allowed keys. q (N,H,L,D), k/v (N,K,S,D) -> (N,H,L,D).

    The fused kernel when nobody asks for the weights; the manual path (same maths) when they do.
    With K < H kv heads (grouped-query), query head h reads kv head h // (H/K), as Llama's repeat_kv does.
    `scale` replaces 1/sqrt(D) when given (attention_scale 'none' passes 1.0). `pattern_hook(weights)`
    sees the weights (N, H, L, S) before they meet v and may return others (the `hook_pattern` point);
    `scores_hook` the scores before softmax, blocked keys at -inf (`hook_attn_scores`).
    """
    gqa = k.shape[1] != q.shape[1]
    q_len, k_len = q.shape[-2], k.shape[-2]
    if dropout_p > 0 and allowed is None and not need_weights and pattern_hook is None and scores_hook is None:
        return _dropped_attend(q, k, v, bias, causal and q_len > 1, dropout_p, scale), None
    if causal and q_len > 1 and (q_len != k_len or allowed is not None or bias is not None):
        allowed = combine(allowed, causal_mask(q_len, k_len, q.device))
        causal = False
    causal = causal and q_len > 1
    if not need_weights and pattern_hook is None and scores_hook is None:
        mask = sdpa_mask(allowed, bias, q.dtype)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=causal,
                                             enable_gqa=gqa, scale=scale)
        return out, None
    if gqa:
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (N, H, S, D)
    if causal:
        allowed = causal_mask(q_len, k_len, q.device)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (N, H, L, S)
    if bias is not None:
        scores = scores + bias
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    if scores_hook is not None:
        scores = scores_hook(scores)
    weights = torch.softmax(scores, dim=-1)
    if pattern_hook is not None:
        weights = pattern_hook(weights)
    out = F.dropout(weights, dropout_p) @ v
    return out, weights


def dropout(x: Tensor, p: float) -> Tensor:
    """`F.dropout(x, p)` in training, drawn as uniform numbers >= p (each kept with probability 1 - p, scaled by
    1 / (1 - p)): on a CPU `torch.rand_like` costs about half of the `bernoulli_` that F.dropout draws with."""
    if p <= 0:
        return x
    if p >= 1:
        return x * 0.0
    return x * torch.rand_like(x).ge_(p).mul_(1 / (1 - p))


def _dropped_attend(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, causal: bool, dropout_p: float,
                    scale: float | None) -> Tensor:
    """Training attention with dropout on its weights, no padding: the fused kernel has no dropout on a CPU, and
    SDPA's own fallback (the math kernel) draws its mask with bernoulli and scans every row for -inf; this is the
    same maths with `dropout`'s cheaper draw. Every row keeps a key (no padding), so a plain softmax is safe."""
    if k.shape[1] != q.shape[1]:
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (N, H, S, D)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    n, h, length, d = q.shape
    s = k.shape[-2]
    add = torch.zeros(length, s, dtype=q.dtype, device=q.device)  # (L, S): the causal mask as -inf, one pass
    if causal:
        add.masked_fill_(~causal_mask(length, s, q.device), float("-inf"))
    if bias is not None:  # (H, L, S)
        add = (add + bias.to(q.dtype)).expand(n, h, length, s).reshape(n * h, length, s)
    # scale * q k^T + mask in one kernel (N*H, L, S)
    scores = torch.baddbmm(add, q.reshape(n * h, length, d), k.reshape(n * h, s, d).transpose(1, 2), alpha=scale)
    weights = dropout(torch.softmax(scores, dim=-1), dropout_p)
    return (weights @ v.reshape(n * h, s, d)).view(n, h, length, d)


def sdpa_mask(allowed: Tensor | None, bias: Tensor | None, dtype: torch.dtype) -> Tensor | None:
    if bias is None:
        return allowed
    bias = bias.to(dtype)
    if allowed is None:
        return bias
    return bias.masked_fill(~allowed, float("-inf"))


def score_scale(config) -> float | None:
    """The factor on q k^T: None is attend()'s 1/sqrt(d_head); 'none' leaves raw dot products (scale 1)."""
    return None if config.attention_scale == "sqrt_d_head" else 1.0


def split_heads(x: Tensor, heads: int) -> Tensor:
    """(N, L, E) -> (N, H, L, D)"""
    n, length, e = x.shape
    return x.view(n, length, heads, e // heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """(N, H, L, D) -> (N, L, E)"""
    n, h, length, d = x.shape
    return x.transpose(1, 2).reshape(n, length, h * d)
