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
