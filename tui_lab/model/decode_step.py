"""The cached one-token decoder step as flat tensor calls: what generation runs once per new token.

On small models a cached step is bound by per-call overhead, not arithmetic (issue 39: a toy's step does ~1% of
an uncached step's FLOPs yet took a third of its time). `Transformer.decode` with a cache, one new position, no
hooks and no weights asked for comes here: each layer's weights are read once into a plan when the generation
starts (the same tensors, nothing copied), and the step calls ATen on rows with no module dispatch, no closures,
no per-step mask for full attention and no (N, 1, E) reshapes. One row (a batch of 1, what the lab's generation
runs) is carried as an (E,) vector, so each projection is ATen's matrix-vector product (`addmv`: a one-row
`linear`'s numbers where measured, an Intel Xeon's MKL, at less per call, which at a toy's size is most of it),
and constant factors are 0-d tensors (a Python float is wrapped and converted on every multiply). The maths is
the module path's, op for op, so the ids are identical and the logits agree to float rounding
(tests/core/model/test_decode_step.py), but for one row's cross-attention over a short source: the source's keys
and values are folded into the query and output projections once per generation (`_FoldedCross`), which is the
same sum in another order (float rounding again) and fewer, cheaper calls. A model this plan does not cover
(Shaw's relative positions, Linformer/Performer, guided cross-attention, copy, batchnorm, BERT's segments) keeps the
module path; a mixture-of-experts FFN runs its one row through the experts it picks (more rows, or any other FFN:
its module).

Dimension legend: N batch, E d_model, H heads, K kv heads, D d_head, S keys, V vocab.
"""

from __future__ import annotations

import os
from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.model.attention import CrossAttention
from tui_lab.model.feed_forward import ACTIVATIONS, FeedForward
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
    """A norm as a call on rows with its weights bound, read once (ATen's own, as F.layer_norm / F.rms_norm call
    it, without their Python checks); None for no norm."""
    if module is None:
        return None
    if isinstance(module, nn.LayerNorm):
        return partial(torch.layer_norm, normalized_shape=module.normalized_shape, weight=module.weight,
                       bias=module.bias, eps=module.eps)
    return partial(torch.rms_norm, normalized_shape=module.normalized_shape, weight=module.weight, eps=module.eps)


def _row_product(weight: Tensor, bias: Tensor | None):
    """weight @ row (+ bias) on one (E,) row, its call bound: one C call behind one Python one."""
    return partial(torch.mv, weight) if bias is None else partial(torch.addmv, bias, weight)


class _Projection:
    """A Linear's weights read once: F.linear on (N, E) rows, one (E,) row as a matrix-vector product."""

    __slots__ = ("weight", "bias", "row")

    def __init__(self, layer: nn.Linear) -> None:
        self.weight, self.bias = layer.weight, layer.bias
        self.row = _row_product(self.weight, self.bias)

    def __call__(self, x: Tensor) -> Tensor:
        return self.row(x) if x.dim() == 1 else F.linear(x, self.weight, self.bias)


# The activations' ATen calls, without torch.nn.functional's Python checks (a toy's step is bound by calls)
_BARE_ACTIVATIONS = {F.relu: torch.relu, F.silu: torch._C._nn.silu,
                     ACTIVATIONS["gelu_tanh"]: partial(F.gelu, approximate="tanh")}


class _Layer:
    """One block's weights and settings, read once."""

    def __init__(self, block: nn.Module) -> None:
        attn = block.attn
        self.pre = block.residual.__name__ == "pre_norm"
        self.attn_norm, self.ffn_norm = _norm(block.attn_norm), _norm(block.ffn_norm)
        self.cross_norm = _norm(getattr(block, "cross_norm", None))
        self.qkv, self.out, self.split = _Projection(attn.qkv), _Projection(attn.out), list(attn.split)
        self.d_head = attn.split[0] // attn.heads
        self.heads, self.kv_heads, self.scale, self.attn = attn.heads, attn.kv_heads, attn.scale, attn
        self.rope, self.window = attn.positions == "rope", attn.window
        self.gqa = attn.kv_heads != attn.heads
        self.biased = attn.positions in BIASED  # ALiBi's distances or T5's buckets, added to the scores
        cross = getattr(block, "cross", None)
        self.cross = None if cross is None else (_Projection(cross.q), _Projection(cross.out), cross.heads, cross.scale)
        self.folded: _FoldedCross | None = None
        ffn = block.ffn
        self.ffn_module = ffn if ffn is not None and not isinstance(ffn, FeedForward) else None  # MoE: its module
        self.ffn = None if not isinstance(ffn, FeedForward) else _dense(ffn)
        self.has_ffn = ffn is not None
        self.experts = None if not isinstance(ffn, SparseMoE) else \
            (ffn.router.weight, ffn.top_k, [_dense(expert) for expert in ffn.experts])

    def __call__(self, x: Tensor, start: int, layer_cache, memory_kv, memory_allowed) -> Tensor:
        """The block on (N, E) rows or one (E,) row: each sublayer pre-norm x + f(norm(x)) or post-norm
        norm(x + f(x)) (blocks.pre_norm / post_norm), written out (a call per sublayer fewer)."""
        if self.pre:
            x = x + self.self_attention(self.attn_norm(x), start, layer_cache)
            if self.cross is not None:
                x = x + self.cross_attention(self.cross_norm(x), memory_kv, memory_allowed)
            return x + self.feed_forward(self.ffn_norm(x)) if self.has_ffn else x
        x = self.attn_norm(x + self.self_attention(x, start, layer_cache))
        if self.cross is not None:
            x = self.cross_norm(x + self.cross_attention(x, memory_kv, memory_allowed))
        return self.ffn_norm(x + self.feed_forward(x)) if self.has_ffn else x

    def self_attention(self, h: Tensor, start: int, layer_cache) -> Tensor:
        """(N, E) or (E,) -> the same: this position's q, k, v; k and v written into the cache in place."""
        d = self.d_head
        if not self.gqa and h.dim() == 1:  # one view and one unbind: two calls fewer
            q, k, v = self.qkv.row(h).view(3, 1, self.heads, 1, d).unbind(0)
        else:
            q, k, v = self.qkv(h).split_with_sizes(self.split, -1)
            q, k, v = q.view(-1, self.heads, 1, d), k.view(-1, self.kv_heads, 1, d), v.view(-1, self.kv_heads, 1, d)
        if self.rope:
            cos, sin = self.attn._rope_table(start + 1, q)
            cos, sin = cos[start:start + 1], sin[start:start + 1]
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        keys, values, positions = layer_cache.append(k, v, start)
        mask = None
        if self.window or self.biased:  # masks and biases by absolute key position, as the module path
            k_pos = positions if positions is not None else torch.arange(keys.shape[-2], device=h.device)
            allowed = None if not self.window else self.attn._local(None, start, start + 1, k_pos, h.device)
            bias = self.attn._position_bias(start, start + 1, k_pos, positions is not None) if self.biased else None
            mask = sdpa_mask(allowed, bias, q.dtype)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, scale=self.scale, enable_gqa=self.gqa)
        if h.dim() == 1:
            return self.out.row(out.view(-1))
        return self.out(out.view(h.shape[0], self.heads * d))

    def cross_attention(self, h: Tensor, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None) -> Tensor:
        if h.dim() == 1:
            if self.folded is None or not self.folded.made_from(memory_kv, allowed):
                self.folded = _FoldedCross.of(self.cross, memory_kv, allowed)
            if self.folded.rows is not None:
                return self.folded(h)
        q_proj, out, heads, scale = self.cross
        width = q_proj.weight.shape[0]
        q = q_proj(h).view(-1, heads, 1, width // heads)
        keys, values = memory_kv
        out_heads = F.scaled_dot_product_attention(q, keys, values, attn_mask=allowed, scale=scale,
                                                   enable_gqa=keys.shape[1] != heads)
        return out(out_heads.view(*h.shape[:-1], width))

    def feed_forward(self, h: Tensor) -> Tensor:
        if self.experts is not None and h.dim() == 1:
            return self._one_row_experts(h)
        if self.ffn_module is not None:
            return self.ffn_module(h)  # a mixture of experts routes (T, E) rows as they come
        return _dense_ffn(self.ffn, h)

    def _one_row_experts(self, h: Tensor) -> Tensor:
        """One (E,) row through its K experts, summed in SparseMoE's order (ascending expert), without its
        per-expert searches: the same numbers as the module."""
        router, top_k, experts = self.experts
        weights, chosen = route(F.linear(h[None], router), top_k)  # (1, K) each
        picked, weights = chosen[0].tolist(), weights[0].to(h.dtype)
        out = None
        for i in sorted(picked):
            mixed = _dense_ffn(experts[i], h) * weights[picked.index(i)]
            out = mixed if out is None else out + mixed
        return out


class _FoldedCross:
    """One row's cross-attention with the source folded in, for a whole generation.

    Per head h, the scores are K_h (W_q,h x + b_q,h) * scale and the output W_o,h V_h^T softmax(...) + b_o: the
    source's keys and values are fixed, so K_h W_q,h * scale (H*S, E) and W_o,h V_h^T (E, H*S) are made once
    and each step is two matrix-vector products and a softmax, where the module path's order is a query
    projection, attention's kernel and an output projection (issue 39: on the 2017 toy the kernel's fixed cost
    per call is most of a step's cross-attention). Folded only where it costs no more arithmetic than the
    module path's order: H*S*E per product against E*E + S*E, so S*(H-1) <= E (`rows` None: not folded)."""

    def __init__(self, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None, rows=None) -> None:
        self.memory_kv, self.allowed, self.rows = memory_kv, allowed, rows

    def made_from(self, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None) -> bool:
        return self.memory_kv is memory_kv and self.allowed is allowed

    @classmethod
    def of(cls, cross, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None) -> _FoldedCross:
        q_proj, out_proj, heads, scale = cross
        (q_w, q_b), (o_w, o_b) = (q_proj.weight, q_proj.bias), (out_proj.weight, out_proj.bias)
        keys, values = memory_kv  # (1, K, S, D)
        if keys.shape[0] != 1 or keys.shape[2] * (heads - 1) > q_w.shape[1]:
            return cls(memory_kv, allowed)
        sources, d = keys.shape[2], keys.shape[3]
        group = heads // keys.shape[1]  # query heads per key/value head
        keys, values = keys[0].repeat_interleave(group, 0), values[0].repeat_interleave(group, 0)  # (H, S, D)
        scale = d ** -0.5 if scale is None else scale
        into_scores = (torch.bmm(keys, q_w.view(heads, d, -1)) * scale).view(heads * sources, -1)  # (H*S, E)
        score_bias = torch.zeros(heads, sources, dtype=keys.dtype, device=keys.device) if q_b is None else \
            torch.bmm(keys, q_b.view(heads, d, 1)).view(heads, sources) * scale
        if allowed is not None:  # (1, 1, 1, S): a padded source position gets no weight
            score_bias = score_bias.masked_fill(~allowed.view(1, sources), float("-inf"))
        out_w = o_w.view(-1, heads, d).transpose(0, 1)  # (H, E, D)
        from_weights = torch.bmm(out_w, values.transpose(1, 2)).transpose(0, 1).reshape(o_w.shape[0], -1)
        rows = (_row_product(into_scores, score_bias.view(-1)), _row_product(from_weights, o_b), heads, sources)
        return cls(memory_kv, allowed, rows)

    def __call__(self, h: Tensor) -> Tensor:
        """(E,) the row after its norm -> (E,) the cross-attention's output."""
        scores, output, heads, sources = self.rows
        return output(torch.softmax(scores(h).view(heads, sources), -1).view(-1))


def _factor(value: float, like: Tensor) -> Tensor | None:
    """A constant factor as a 0-d tensor of the weights' dtype (None for 1): a Python float is wrapped into a
    fresh tensor and converted on every multiply, which costs more than the multiply on one row; the product is
    the same, the factor being rounded to the dtype either way."""
    return None if value == 1.0 else torch.tensor(value, dtype=like.dtype, device=like.device)


def _dense(ffn: FeedForward):
    gate = None if ffn.gate is None else _Projection(ffn.gate)
    return _Projection(ffn.up), gate, _Projection(ffn.down), _BARE_ACTIVATIONS.get(ffn.act, ffn.act)


def _dense_ffn(weights, h: Tensor) -> Tensor:
    """FeedForward.forward on (N, E) rows or one (E,) row."""
    up, gate, down, act = weights
    return down(act(gate(h)) * up(h) if gate is not None else act(up(h)))


class DecodeStep:
    """A model's cached one-token step, its weights read once (build one per generation: a plan read before a
    weight was replaced, rather than changed in place, would use the old one)."""

    def __init__(self, model: nn.Module) -> None:
        self.embed_weight = weight = model.tok_embed.weight
        self.scale, self.out_scale = _factor(model.scale, weight), _factor(model.out_scale, weight)
        self.pos_embed, self.embed_norm = model.pos_embed, _norm(model.embed_norm)
        self.pos_table = self._pos_table()
        self.layers = [_Layer(block) for block in model.decoder]
        self.final_norm = _norm(model.decoder_norm)
        self.head = _Projection(model.lm_head)

    def __call__(self, ids: Tensor, start: int, cache, memory_kv, memory_allowed) -> Tensor:
        """ids (N, 1) at position `start` -> logits (N, V); the cache holds every earlier position."""
        rows = ids.shape[0]
        x = self._embed(ids, rows)
        if self.scale is not None:
            x = x * self.scale
        if self.pos_embed is not None:
            x = x + self._position(start)
        if self.embed_norm is not None:
            x = self.embed_norm(x)
        for i, layer in enumerate(self.layers):
            x = layer(x, start, cache.layers[i], memory_kv[i] if memory_kv is not None else None, memory_allowed)
        if self.final_norm is not None:
            x = self.final_norm(x)
        if self.out_scale is not None:
            x = x * self.out_scale
        return self.head(x).view(rows, self.head.weight.shape[0])

    def _embed(self, ids: Tensor, rows: int) -> Tensor:
        """(N, E) rows of the embedding, or one (E,) row; on a CPU one row is read as a view of its table row
        (a third of an embedding call's cost there; on an accelerator reading the id would wait for it)."""
        if rows != 1 or ids.device.type != "cpu":
            return torch.embedding(self.embed_weight, ids.view(-1) if rows != 1 else ids.view(()))
        return self.embed_weight[int(ids)]

    def _pos_table(self) -> Tensor | None:
        """The additive positions' rows as they are now (a sinusoidal table grows on demand; learned: its weight)."""
        if self.pos_embed is None:
            return None
        return self.pos_embed.table if hasattr(self.pos_embed, "table") else self.pos_embed.weight

    def _position(self, start: int) -> Tensor:
        """(E,) the position `start`'s vector: a row of the table, or the module's own answer past its end (a
        sinusoidal table grows; learned positions refuse, as on the module path)."""
        if start < self.pos_table.shape[0]:
            return self.pos_table[start]
        row = self.pos_embed.forward(start, 1)[0]
        self.pos_table = self._pos_table()
        return row


def decode_step(model: nn.Module, cache) -> DecodeStep | None:
    """The cache's step plan, built at its first cached step (None: this model keeps the module path).
    TUI_LAB_MODULE_STEP=1 keeps every step on the module path (to compare the two: benchmarks/speed)."""
    if cache.step is False:
        flat = flat_step_fits(model) and os.environ.get("TUI_LAB_MODULE_STEP") != "1"
        cache.step = DecodeStep(model) if flat else None
    return cache.step
