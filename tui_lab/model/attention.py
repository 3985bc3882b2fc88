"""The attention layers (self and cross), their three kinds, and the typed capture the app draws.

The maths is scaled_dot.py's `attend`; the hook points a layer passes through are attention_hooks.py's.
Dimension legend: N batch, H heads, K kv heads (H when multi-head, 1 when multi-query), L/T query length,
S key length, E d_model, D d_head = E / H. Masks follow `masks.py`: True = may attend.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from tui_lab.model.attention_hooks import by_position_hook, head_output, hook_heads, rotated
from tui_lab.model.efficient import LinformerProjection, approximate_attention, linformer_attend, performer_attend
from tui_lab.model.hooks import HookScope
from tui_lab.model.linear import Linear
from tui_lab.model.masks import combine, local_mask
from tui_lab.model.positions import (
    alibi_bias,
    apply_rope,
    apply_rope_full,
    rope_angles,
    rope_full_tables,
    rope_turns,
)
from tui_lab.model.relative import RELATIVE, ShawRelative
from tui_lab.model.scaled_dot import attend, merge_heads, score_scale, split_heads

KINDS = ("encoder-self", "decoder-self", "cross")


@dataclass(frozen=True)
class AttentionCapture:
    """What one attention layer saw: weights (N, H, Lq, Lk) after softmax."""

    stack: str  # "encoder" or "decoder"
    layer: int
    kind: str  # one of KINDS
    weights: Tensor


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
        self.qkv = Linear(e, sum(self.split), bias=config.bias or config.qkv_bias)
        self.out = Linear(e, e, bias=config.bias)
        self._rope: tuple[Tensor, Tensor] | None = None  # cos/sin table, grown on demand (not a parameter)
        self._rope_full_cache: tuple | None = None  # (the table it came from, cos2, sin2, turns): `_rope_full`
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
        q, k, v = self._heads(x, start, hooks)  # q (N, H, L, D), k/v (N, K, L, D)
        end = start + x.shape[1]
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
        pattern = by_position_hook(hooks, "hook_pattern", rolled, end, 0.0)
        scores = by_position_hook(hooks, "hook_attn_scores", rolled, end, float("-inf"))
        out, _ = run(q, k, v, allowed, bias, self.causal, drop, False, self.scale, pattern, scores)
        return head_output(self.out, hooks, out)

    def _heads(self, x: Tensor, start: int, hooks: HookScope | None) -> tuple[Tensor, Tensor, Tensor]:
        """q (N, H, L, D), k and v (N, K, L, D) of x at positions start.., q and k turned where RoPE is on."""
        if self.positions == "rope" and hooks is None and self.approx is None:
            return self._rope_heads(x, start)
        q, k, v = self.qkv(x).split(self.split, dim=-1)
        if hooks is not None:
            q, k, v = hook_heads(hooks, "hook_q", q, self.heads), hook_heads(hooks, "hook_k", k, self.kv_heads), \
                hook_heads(hooks, "hook_v", v, self.kv_heads)
        q, k, v = split_heads(q, self.heads), split_heads(k, self.kv_heads), split_heads(v, self.kv_heads)
        if self.positions == "rope":
            end = start + x.shape[1]
            cos, sin = self._rope_table(end, q)
            q, k = apply_rope(q, cos[start:end], sin[start:end]), apply_rope(k, cos[start:end], sin[start:end])
            if hooks is not None:
                q, k = rotated(hooks, "hook_rot_q", q), rotated(hooks, "hook_rot_k", k)
        return q, k, v

    def _rope_heads(self, x: Tensor, start: int) -> tuple[Tensor, Tensor, Tensor]:
        """`_heads` for RoPE without hooks: q and k turned together in one pass over their (N, L, H + K, D) slab
        of the projection (`apply_rope_full`, the same numbers as turning each)."""
        qkv = self.qkv(x)
        end = start + qkv.shape[1]
        # split, not slices: split's backward is one cat, a slice's a zero-filled copy of the whole
        qk, v = qkv.split((self.split[0] + self.split[1], self.split[2]), dim=-1)
        qk = qk.unflatten(-1, (self.heads + self.kv_heads, -1))  # (N, L, H + K, D)
        cos2, sin2, turns = self._rope_full(end, qk)
        q, k = apply_rope_full(qk, cos2[start:end, None], sin2[start:end, None], turns[start:end, None]).split(
            (self.heads, self.kv_heads), dim=2)
        return q.transpose(1, 2), k.transpose(1, 2), split_heads(v, self.kv_heads)

    def _rope_full(self, length: int, like: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """`_rope_table` laid out per feature (positions.rope_full_tables) and as complex turns
        (positions.rope_turns), kept beside it."""
        table = self._rope_table(length, like)
        if self._rope_full_cache is None or self._rope_full_cache[0] is not table:
            with torch.inference_mode(False), torch.no_grad():
                self._rope_full_cache = (table, *rope_full_tables(*table), rope_turns(*table))
        return self._rope_full_cache[1:]

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




class CrossAttention(nn.Module):
    """Queries from the decoder (T), keys and values from the encoder output (S): scores T x S."""

    def __init__(self, config) -> None:
        super().__init__()
        e, kv_dim = config.d_model, config.n_kv_heads * config.d_head
        self.heads, self.kv_heads, self.dropout = config.heads, config.n_kv_heads, config.dropout
        self.scale = score_scale(config)
        self.q = Linear(e, e, bias=config.bias or config.qkv_bias)
        self.kv = Linear(e, 2 * kv_dim, bias=config.bias or config.qkv_bias)
        self.out = Linear(e, e, bias=config.bias)

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
        pattern = by_position_hook(hooks, "hook_pattern", None, 0, 0.0) if hooks is not None else None
        scores = by_position_hook(hooks, "hook_attn_scores", None, 0, 0.0) if hooks is not None else None
        out, _ = attend(q, *memory_kv, allowed, None, False, drop, False, self.scale, pattern, scores)
        return self.out(merge_heads(out)) if hooks is None else head_output(self.out, hooks, out)
