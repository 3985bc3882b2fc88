"""Scaled dot-product attention, its three kinds, and the typed capture the app draws.

Dimension legend: N batch, H heads, K kv heads (H when multi-head, 1 when multi-query), L/T query length,
S key length, E d_model, D d_head = E / H. Masks follow `masks.py`: True = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.model.efficient import LinformerProjection, approximate_attention, linformer_attend, performer_attend
from tui_lab.model.hooks import HookScope
from tui_lab.model.masks import causal_mask, combine, local_mask
from tui_lab.model.positions import alibi_bias, apply_rope, rope_angles
from tui_lab.model.relative import RELATIVE, ShawRelative

KINDS = ("encoder-self", "decoder-self", "cross")


@dataclass(frozen=True)
class AttentionCapture:
    """What one attention layer saw: weights (N, H, Lq, Lk) after softmax."""

    stack: str  # "encoder" or "decoder"
    layer: int
    kind: str  # one of KINDS
    weights: Tensor


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


class SelfAttention(nn.Module):
    """Encoder self-attention (causal=False) or decoder masked self-attention (causal=True).

    One fused q/k/v projection, laid out as `nn.MultiheadAttention.in_proj_weight` (q, k, v rows); with
    grouped-query attention the k and v rows shrink to K x D each (E + 2*K*D output features).
    """

    def __init__(self, config, causal: bool) -> None:
        super().__init__()
        e = config.d_model
        self.heads, self.kv_heads, self.causal = config.heads, config.n_kv_heads, causal
        self.split = (e, self.kv_heads * config.d_head, self.kv_heads * config.d_head)
        self.window, self.global_tokens = config.attention_window, config.global_tokens
        self.positions, self.rope_base = config.positions, config.rope_base
        self.dropout = config.dropout
        self.scale = score_scale(config)
        self.qkv = nn.Linear(e, sum(self.split), bias=config.bias or config.qkv_bias)
        self.out = nn.Linear(e, e, bias=config.bias)
        self._rope: tuple[Tensor, Tensor] | None = None  # cos/sin table, grown on demand (not a parameter)
        # positions 'relative': this layer's tables; 't5': the first layer's table (relative.share_t5_bias)
        self.shaw = ShawRelative(config) if config.positions == "relative" else None
        self.t5_bias, self.shared_t5 = None, []
        self.approx = approximate_attention(config)  # Linformer's E/F or Performer's features; None: softmax

    def forward(
        self,
        x: Tensor,
        allowed: Tensor | None = None,
        start: int = 0,
        cache=None,
        hooks: HookScope | None = None,
    ) -> Tensor:
        q, k, v = self.qkv(x).split(self.split, dim=-1)
        if hooks is not None:
            q, k, v = hook_heads(hooks, "hook_q", q, self.heads), hook_heads(hooks, "hook_k", k, self.kv_heads), \
                hook_heads(hooks, "hook_v", v, self.kv_heads)
        q, k, v = split_heads(q, self.heads), split_heads(k, self.kv_heads), split_heads(v, self.kv_heads)
        end = start + x.shape[1]  # q (N, H, L, D), k/v (N, K, L, D)
        if self.positions == "rope":
            cos, sin = self._rope_table(end, q)
            q, k = apply_rope(q, cos[start:end], sin[start:end]), apply_rope(k, cos[start:end], sin[start:end])
            if hooks is not None:
                q, k = rotated(hooks, "hook_rot_q", q), rotated(hooks, "hook_rot_k", k)
        if self.approx is not None:
            out = self._approximate(q, k, v, allowed, cache, hooks)
            return self.out(merge_heads(out)) if hooks is None else head_output(self.out, hooks, out)
        rolled = None  # the keys' absolute positions when a rolling window cache holds them out of order
        if cache is not None:
            k, v, rolled = cache.append(k, v, start)  # (N, K, S, D): S = start + L, or the window's slots
        k_pos = rolled
        if rolled is None and (self.window or self.positions in ("alibi", *RELATIVE)):
            k_pos = torch.arange(k.shape[-2], device=x.device)  # (S,) slot i holds position i
        if self.window:
            allowed = self._local(allowed, start, end, k_pos, x.device)
        bias = self._position_bias(start, end, k_pos, rolled is not None)
        run = attend if self.shaw is None else self.shaw.attend_at(attend, torch.arange(start, end, device=x.device),
                                                                    k_pos)
        drop = self.dropout if self.training else 0.0
        if hooks is None:
            out, _ = run(q, k, v, allowed, bias, self.causal, drop, False, self.scale)
            return self.out(merge_heads(out))
        pattern = _by_position_hook(hooks, "hook_pattern", rolled, end, 0.0)
        scores = _by_position_hook(hooks, "hook_attn_scores", rolled, end, float("-inf"))
        out, _ = run(q, k, v, allowed, bias, self.causal, drop, False, self.scale, pattern, scores)
        return head_output(self.out, hooks, out)

    def _position_bias(self, start: int, end: int, k_pos: Tensor | None, rolled: bool) -> Tensor | None:
        """(H, L, S) added to the scores: ALiBi's distance penalty or T5's bucket bias; None for the rest."""
        if self.positions == "alibi":
            return alibi_bias(self.heads, torch.arange(start, end, device=k_pos.device), k_pos, self.causal)
        if self.positions != "t5":
            return None
        table = self.t5_bias if self.t5_bias is not None else self.shared_t5[0]
        return table(start, end, k_pos, first=self.t5_bias is not None, rolled=rolled)
    def _approximate(self, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, cache,
                     hooks: HookScope | None) -> Tensor:
        """Linformer or Performer (model/efficient.py) -> (N, H, L, D); a Performer cache is its running sums."""
        pattern = None if hooks is None or not hooks.wants("hook_pattern") else lambda w: hooks("hook_pattern", w)
        if isinstance(self.approx, LinformerProjection):
            scores = None if hooks is None or not hooks.wants("hook_attn_scores") else \
                (lambda s: hooks("hook_attn_scores", s))
            drop = self.dropout if self.training else 0.0
            return linformer_attend(self.approx, q, k, v, allowed, self.scale, drop, attend, pattern, scores)
        return performer_attend(self.approx, q, k, v, allowed, self.causal, self.scale, cache, pattern)

    def _local(self, allowed: Tensor | None, start: int, end: int, k_pos: Tensor, device) -> Tensor:
        """The sliding window (and global tokens) by absolute position, so a cached step masks like a full pass."""
        q_pos = torch.arange(start, end, device=device)
        local = combine(allowed, local_mask(q_pos, k_pos, self.window, self.causal, self.global_tokens))
        # A padded query whose window holds only padding would have no key at all (softmax of nothing is NaN,
        # and NaN values leak through the next layer's zero weights): it always sees itself; the loss ignores it.
        # An empty slot of a rolling cache (position -1) is never seen.
        return (local | (q_pos[:, None] == k_pos[None, :])) & (k_pos >= 0)

    def _rope_table(self, length: int, like: Tensor) -> tuple[Tensor, Tensor]:
        """RoPE's cos/sin for positions 0..length-1, computed once and reused by every step."""
        if self._rope is None or self._rope[0].shape[0] < length or self._rope[0].device != like.device:
            size = max(length, 2 * (0 if self._rope is None else self._rope[0].shape[0]))
            with torch.inference_mode(False), torch.no_grad():  # a table made while generating serves training too
                self._rope = rope_angles(like.shape[-1], torch.arange(size, device=like.device), self.rope_base)
        return self._rope


def hook_heads(hooks: HookScope, name: str, x: Tensor, heads: int) -> Tensor:
    """(N, L, heads * D) through the point `name` as (N, L, heads, D), TransformerLens's layout."""
    n, length, width = x.shape
    return hooks(name, x.view(n, length, heads, width // heads)).reshape(n, length, width)


def hook_z(hooks: HookScope, out: Tensor) -> Tensor:
    """Attention's per-head output (N, H, L, D) through `hook_z` as (N, L, H, D), merged to (N, L, E)."""
    z = hooks("hook_z", out.transpose(1, 2))
    return z.reshape(*z.shape[:2], -1)


def head_output(proj: nn.Linear, hooks: HookScope, out: Tensor) -> Tensor:
    """The output projection of the heads' output (N, H, L, D), through `hook_z` and, when something is attached
    there, `hook_result` (N, L, H, E): each head's write z_h @ W_O^h before the sum, without the bias. Read only,
    the projection runs as without it (bit for bit); replaced, the heads' writes are summed and the bias added."""
    merged = hook_z(hooks, out)
    if not hooks.wants("hook_result"):
        return proj(merged)
    z = merged.view(*merged.shape[:2], out.shape[1], -1)  # (N, L, H, D)
    w = proj.weight.view(proj.weight.shape[0], out.shape[1], -1)  # (E, H, D)
    result = torch.einsum("nlhd,ehd->nlhe", z, w)
    new = hooks("hook_result", result)
    if new is result:
        return proj(merged)
    summed = new.sum(dim=2)
    return summed if proj.bias is None else summed + proj.bias


def rotated(hooks: HookScope, name: str, x: Tensor) -> Tensor:
    """q or k (N, H, L, D) after RoPE through `hook_rot_q` / `hook_rot_k` as (N, L, H, D), when one is attached."""
    if not hooks.wants(name):
        return x
    return hooks(name, x.transpose(1, 2)).transpose(1, 2)


def _by_position_hook(hooks: HookScope, name: str, rolled: Tensor | None, end: int, fill: float
                      ) -> Callable[[Tensor], Tensor] | None:
    """The point `name` (scores or pattern) with keys by position 0..end-1, as a full pass has them, even over a
    rolling cache's slots (positions it no longer holds read `fill`); None when nothing is attached there."""
    if not hooks.wants(name):
        return None
    if rolled is None:
        return lambda grid: hooks(name, grid)

    def by_position(grid: Tensor) -> Tensor:
        full = _by_position(grid, rolled, end, fill)
        new = hooks(name, full)
        return grid if new is full else new[..., rolled.clamp(min=0)].masked_fill(rolled < 0, fill)

    return by_position


def _by_position(weights: Tensor, k_pos: Tensor, end: int, fill: float = 0.0) -> Tensor:
    """Weights over a rolling cache's slots (N, H, L, slots) -> over positions 0..end-1, as a full pass has them."""
    grid = weights.new_full((*weights.shape[:-1], end), fill)
    seen = k_pos >= 0
    return grid.index_copy_(-1, k_pos[seen], weights[..., seen])


class CrossAttention(nn.Module):
    """Queries from the decoder (T), keys and values from the encoder output (S): scores T x S."""

    def __init__(self, config) -> None:
        super().__init__()
        e, kv_dim = config.d_model, config.n_kv_heads * config.d_head
        self.heads, self.kv_heads, self.dropout = config.heads, config.n_kv_heads, config.dropout
        self.scale = score_scale(config)
        self.q = nn.Linear(e, e, bias=config.bias or config.qkv_bias)
        self.kv = nn.Linear(e, 2 * kv_dim, bias=config.bias or config.qkv_bias)
        self.out = nn.Linear(e, e, bias=config.bias)

    def memory_kv(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Project the encoder output once; a KV cache keeps this for every decoding step."""
        k, v = self.kv(memory).chunk(2, dim=-1)
        return split_heads(k, self.kv_heads), split_heads(v, self.kv_heads)  # (N, K, S, D)

    def forward(
        self,
        x: Tensor,
        memory_kv: tuple[Tensor, Tensor],
        allowed: Tensor | None = None,
        hooks: HookScope | None = None,
        start: int = 0,
        cache=None,
    ) -> Tensor:
        """`start` and the layer's `cache` are for the guided kinds, which carry an alignment from step to step
        (tui_lab/model/guided_cross.py); softmax needs neither."""
        q = self.q(x)
        if hooks is not None:
            q = hook_heads(hooks, "hook_q", q, self.heads)
        q = split_heads(q, self.heads)  # (N, H, T, D)
        drop = self.dropout if self.training else 0.0
        pattern = _by_position_hook(hooks, "hook_pattern", None, 0, 0.0) if hooks is not None else None
        scores = _by_position_hook(hooks, "hook_attn_scores", None, 0, 0.0) if hooks is not None else None
        out, _ = attend(q, *memory_kv, allowed, None, False, drop, False, self.scale, pattern, scores)
        return self.out(merge_heads(out)) if hooks is None else head_output(self.out, hooks, out)
