"""The cached one-token decoder step as flat tensor calls: what generation runs once per new token.

On small models a cached step is bound by per-call overhead, not arithmetic (issue 39: a toy's step does ~1% of
an uncached step's FLOPs yet took a third of its time). `Transformer.decode` with a cache, one new position, no
hooks and no weights asked for comes here: each layer's weights are read once into a plan when the generation
starts (the same tensors, nothing copied), and the step calls `F.linear`, `F.layer_norm` and
`F.scaled_dot_product_attention` on (N, E) rows with no module dispatch, no closures, no per-step mask for full
attention and no (N, 1, E) reshapes. The maths is the module path's, op for op, so the ids are identical
(tests/core/model/test_decode_step.py). A model this plan does not cover (Shaw's relative positions,
Linformer/Performer, guided cross-attention, copy, batchnorm, BERT's segments) keeps the module path; a
mixture-of-experts FFN runs its one row through the experts it picks (more rows, or any other FFN: its module).

Dimension legend: N batch, E d_model, H heads, K kv heads, D d_head, S keys, V vocab.
"""

from __future__ import annotations

import os

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.model.attention import CrossAttention
from tui_lab.model.feed_forward import FeedForward
from tui_lab.model.moe import SparseMoE, route
from tui_lab.model.positions import apply_rope
from tui_lab.model.scaled_dot import sdpa_mask

BIASED = ("alibi", "t5")
FLAT_POSITIONS = ("learned", "sinusoidal", "sinusoidal_halves", "rope", "none", *BIASED)


def flat_step_fits(model: nn.Module) -> bool:
    """Whether `DecodeStep` covers this model (else its cached steps keep the module path)."""
    c = model.config
    return (c.input == "tokens" and c.family != "encoder-only" and c.positions in FLAT_POSITIONS
            and c.norm in ("layernorm", "rmsnorm") and c.self_attention == "softmax" and not c.copy
            and model.type_embed is None and model.copy_gate is None and model.head is None
            and all(getattr(b, "cross", None) is None or type(b.cross) is CrossAttention for b in model.decoder)
            and all(b.attn.shaw is None and b.attn.approx is None for b in model.decoder))


def _norm(module: nn.Module | None):
    """A norm as (kind, weight, bias, eps), read once; None for no norm."""
    if module is None:
        return None
    if isinstance(module, nn.LayerNorm):
        return ("layer", module.normalized_shape, module.weight, module.bias, module.eps)
    return ("rms", module.normalized_shape, module.weight, None, module.eps)


def _apply_norm(norm, x: Tensor) -> Tensor:
    kind, shape, weight, bias, eps = norm
    if kind == "layer":
        return F.layer_norm(x, shape, weight, bias, eps)
    return F.rms_norm(x, shape, weight, eps)


def _linear(layer: nn.Linear) -> tuple[Tensor, Tensor | None]:
    return layer.weight, layer.bias


class _Layer:
    """One block's weights and settings, read once."""

    def __init__(self, block: nn.Module) -> None:
        attn = block.attn
        self.pre = block.residual.__name__ == "pre_norm"
        self.attn_norm, self.ffn_norm = _norm(block.attn_norm), _norm(block.ffn_norm)
        self.cross_norm = _norm(getattr(block, "cross_norm", None))
        self.qkv, self.out, self.split = _linear(attn.qkv), _linear(attn.out), attn.split
        self.heads, self.kv_heads, self.scale, self.attn = attn.heads, attn.kv_heads, attn.scale, attn
        self.rope, self.window = attn.positions == "rope", attn.window
        self.biased = attn.positions in BIASED  # ALiBi's distances or T5's buckets, added to the scores
        cross = getattr(block, "cross", None)
        self.cross = None if cross is None else (_linear(cross.q), _linear(cross.out), cross.heads, cross.scale)
        ffn = block.ffn
        self.ffn_module = ffn if ffn is not None and not isinstance(ffn, FeedForward) else None  # MoE: its module
        self.ffn = None if not isinstance(ffn, FeedForward) else _dense(ffn)
        self.experts = None if not isinstance(ffn, SparseMoE) else \
            (ffn.router.weight, ffn.top_k, [_dense(expert) for expert in ffn.experts])

    def sublayer(self, x: Tensor, norm, f, *args) -> Tensor:
        """Pre-norm x + f(norm(x)) or post-norm norm(x + f(x)) (blocks.pre_norm / post_norm)."""
        if self.pre:
            return x + f(_apply_norm(norm, x), *args)
        return _apply_norm(norm, x + f(x, *args))

    def self_attention(self, h: Tensor, start: int, layer_cache) -> Tensor:
        """(N, E) -> (N, E): this position's q, k, v; k and v written into the cache in place."""
        n = h.shape[0]
        q, k, v = F.linear(h, *self.qkv).split(self.split, dim=-1)
        d = q.shape[-1] // self.heads
        q, k, v = q.view(n, self.heads, 1, d), k.view(n, self.kv_heads, 1, d), v.view(n, self.kv_heads, 1, d)
        if self.rope:
            cos, sin = self.attn._rope_table(start + 1, q)
            q, k = apply_rope(q, cos[start:start + 1], sin[start:start + 1]), \
                apply_rope(k, cos[start:start + 1], sin[start:start + 1])
        keys, values, positions = layer_cache.append(k, v, start)
        mask = None
        if self.window or self.biased:  # masks and biases by absolute key position, as the module path
            k_pos = positions if positions is not None else torch.arange(keys.shape[-2], device=h.device)
            allowed = None if not self.window else self.attn._local(None, start, start + 1, k_pos, h.device)
            bias = self.attn._position_bias(start, start + 1, k_pos, positions is not None) if self.biased else None
            mask = sdpa_mask(allowed, bias, q.dtype)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, scale=self.scale,
                                             enable_gqa=self.kv_heads != self.heads)
        return F.linear(out.reshape(n, self.heads * d), *self.out)

    def cross_attention(self, h: Tensor, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None) -> Tensor:
        (q_w, q_b), out, heads, scale = self.cross
        n = h.shape[0]
        q = F.linear(h, q_w, q_b).view(n, heads, 1, q_w.shape[0] // heads)
        keys, values = memory_kv
        out_heads = F.scaled_dot_product_attention(q, keys, values, attn_mask=allowed, scale=scale,
                                                   enable_gqa=keys.shape[1] != heads)
        return F.linear(out_heads.reshape(n, q_w.shape[0]), *out)

    def feed_forward(self, h: Tensor) -> Tensor:
        if self.experts is not None and h.shape[0] == 1:
            return self._one_row_experts(h)
        if self.ffn_module is not None:
            return self.ffn_module(h)  # a mixture of experts routes (T, E) rows as they come
        return _dense_ffn(self.ffn, h)

    def _one_row_experts(self, h: Tensor) -> Tensor:
        """One row through its K experts, summed in SparseMoE's order (ascending expert), without its per-expert
        searches: the same numbers as the module."""
        router, top_k, experts = self.experts
        weights, chosen = route(F.linear(h, router), top_k)  # (1, K) each
        picked = chosen[0].tolist()
        out = None
        for i in sorted(picked):
            mixed = _dense_ffn(experts[i], h) * weights[:, picked.index(i), None].to(h.dtype)
            out = mixed if out is None else out + mixed
        return out


def _dense(ffn: FeedForward):
    return _linear(ffn.up), None if ffn.gate is None else _linear(ffn.gate), _linear(ffn.down), ffn.act


def _dense_ffn(weights, h: Tensor) -> Tensor:
    """FeedForward.forward on (N, E) rows."""
    up, gate, down, act = weights
    hidden = act(F.linear(h, *gate)) * F.linear(h, *up) if gate is not None else act(F.linear(h, *up))
    return F.linear(hidden, *down)


class DecodeStep:
    """A model's cached one-token step, its weights read once (build one per generation: a plan read before a
    weight was replaced, rather than changed in place, would use the old one)."""

    def __init__(self, model: nn.Module) -> None:
        self.embed_weight, self.scale = model.tok_embed.weight, model.scale
        self.pos_embed, self.embed_norm = model.pos_embed, _norm(model.embed_norm)
        self.layers = [_Layer(block) for block in model.decoder]
        self.final_norm, self.out_scale = _norm(model.decoder_norm), model.out_scale
        self.head = _linear(model.lm_head)

    def __call__(self, ids: Tensor, start: int, cache, memory_kv, memory_allowed) -> Tensor:
        """ids (N, 1) at position `start` -> logits (N, V); the cache holds every earlier position."""
        x = F.embedding(ids[:, 0], self.embed_weight)
        if self.scale != 1.0:
            x = x * self.scale
        if self.pos_embed is not None:
            x = x + self.pos_embed.forward(start, 1)
        if self.embed_norm is not None:
            x = _apply_norm(self.embed_norm, x)
        for i, layer in enumerate(self.layers):
            x = layer.sublayer(x, layer.attn_norm, layer.self_attention, start, cache.layers[i])
            if layer.cross is not None:
                x = layer.sublayer(x, layer.cross_norm, layer.cross_attention, memory_kv[i], memory_allowed)
            if layer.ffn is not None or layer.ffn_module is not None:
                x = layer.sublayer(x, layer.ffn_norm, layer.feed_forward)
        if self.final_norm is not None:
            x = _apply_norm(self.final_norm, x)
        if self.out_scale != 1.0:
            x = x * self.out_scale
        return F.linear(x, *self.head)


def decode_step(model: nn.Module, cache) -> DecodeStep | None:
    """The cache's step plan, built at its first cached step (None: this model keeps the module path).
    TUI_LAB_MODULE_STEP=1 keeps every step on the module path (to compare the two: benchmarks/speed)."""
    if cache.step is False:
        flat = flat_step_fits(model) and os.environ.get("TUI_LAB_MODULE_STEP") != "1"
        cache.step = DecodeStep(model) if flat else None
    return cache.step
