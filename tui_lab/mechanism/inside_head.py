"""Inside one head: softmax(q·kᵀ / √d_k + bias, masked) · v for one query, step by step, from a real pass.

`trace` runs the model once and keeps, at its hook points, every attention layer's q, k and v (before RoPE,
as `tui_lab.model.hooks` lists them), its pattern and its per-head output `hook_z`, plus the encoder output
cross-attention reads. `HeadTrace.steps` then recomputes one query of one head the way `attend` does it
(RoPE applied with the layer's own table, grouped-query heads sharing kv head h // (H/K), ALiBi's bias, the
mask rule), each step kept as a row, and sets the pass's own pattern row and output beside them, so the last
steps can be checked against what the model computed (`weight_error`, `out_error`).

Dimension legend: L query length, S key length, H heads, K kv heads, D d_head (= d_k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from tui_lab.mask_rule import may_attend
from tui_lab.mechanism.cache import run_with_cache
from tui_lab.model.hooks import FINAL_NORM, stack_names
from tui_lab.model.positions import alibi_bias, apply_rope

# The attention kinds a head can have (the app's grid kinds; "copy" is a gate's mixture, no head).
HEAD_KINDS = ("encoder-self", "decoder-self", "cross")


@dataclass(frozen=True)
class HeadSteps:
    """One query of one head, each step of the formula over the keys (S,) or the value dims (D,)."""

    kind: str
    layer: int
    head: int
    query: int
    heads: int  # H query heads
    kv_head: int  # the key/value head this query head reads (h // (H/K))
    kv_heads: int  # K
    d_k: int
    scale: float  # the factor on q·k: 1/√d_k, or 1 when the model leaves raw dot products
    rope: bool  # q and k were rotated by their positions before the dot product
    q: list[float]  # the query vector (D,), rotated when `rope`
    dots: list[float]  # q·k for each key
    scaled: list[float]  # q·k × scale
    bias: list[float] | None  # ALiBi's -slope × distance, added before the mask; None without ALiBi
    allowed: list[bool]  # the mask rule's verdict per key (True = may attend)
    masked: list[float]  # the scores softmax reads: -inf where the mask blocks
    weights: list[float]  # softmax over the keys
    out: list[float]  # Σ_k weights[k] · v[k], the head's output for this query (D,)
    pattern: list[float]  # the pass's own weights for this query (hook_pattern): the grid's row
    head_out: list[float]  # the pass's own output for this query and head (hook_z)

    @property
    def group(self) -> int:
        """How many query heads share one key/value head (1 without grouped-query attention)."""
        return self.heads // self.kv_heads

    @property
    def weight_error(self) -> float:
        return max((abs(a - b) for a, b in zip(self.weights, self.pattern, strict=True)), default=0.0)

    @property
    def out_error(self) -> float:
        return max((abs(a - b) for a, b in zip(self.out, self.head_out, strict=True)), default=0.0)


@dataclass
class HeadTrace:
    """The activations of one pass that `steps` needs, and the model they came from."""

    model: Any
    cache: dict[str, Tensor]

    def kinds(self) -> list[tuple[str, int]]:
        """(kind, layer) of every attention layer the pass went through."""
        return [(kind, layer) for kind, layers in _stacks(self.model).items() for layer in range(len(layers))]

    def steps(self, kind: str, layer: int, head: int, query: int) -> HeadSteps:
        if kind not in HEAD_KINDS:
            raise ValueError(f"kind: {kind!r} has no heads of its own (one of {', '.join(HEAD_KINDS)})")
        stack = _stacks(self.model).get(kind, [])
        if not 0 <= layer < len(stack):
            raise ValueError(f"layer: {layer} is not a {kind} layer of this model (0..{len(stack) - 1})")
        module = stack[layer]
        if not 0 <= head < module.heads:
            raise ValueError(f"head: {head} is outside 0..{module.heads - 1}")
        prefix = f"{_point_prefix(self.model, kind)}.{layer}.{'cross_attn' if kind == 'cross' else 'attn'}."
        q_all = self.cache[prefix + "hook_q"][0]  # (L, H, D)
        if not 0 <= query < q_all.shape[0]:
            raise ValueError(f"query: {query} is outside 0..{q_all.shape[0] - 1}")
        k_all, v_all = self._keys_values(kind, layer, module, prefix)  # (S, K, D) each
        group = module.heads // module.kv_heads
        kv = head // group
        q, k, v = q_all[:, head].float(), k_all[:, kv].float(), v_all[:, kv].float()  # (L, D), (S, D), (S, D)
        rope = kind != "cross" and module.positions == "rope"
        if rope:  # the layer rotates q and k after the hook points (hook_q/hook_k are before RoPE)
            cos, sin = module._rope_table(max(q.shape[0], k.shape[0]), q)
            q, k = apply_rope(q, cos[:q.shape[0]], sin[:q.shape[0]]), apply_rope(k, cos[:k.shape[0]], sin[:k.shape[0]])
        d_k = q.shape[-1]
        scale = 1 / math.sqrt(d_k) if module.scale is None else module.scale
        dots = k @ q[query]  # (S,)
        scores = dots * scale
        bias = self._bias(kind, module, head, query, k.shape[0])
        if bias is not None:
            scores = scores + bias
        allowed = self._allowed(kind, module, query, k.shape[0])
        masked = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        out = weights @ v  # (D,)
        pattern = self.cache[prefix + "hook_pattern"][0, head, query]  # (S,)
        head_out = self.cache[prefix + "hook_z"][0, query, head]  # (D,)
        return HeadSteps(kind, layer, head, query, module.heads, kv, module.kv_heads, d_k, scale, rope,
                         _floats(q[query]), _floats(dots), _floats(dots * scale),
                         None if bias is None else _floats(bias), allowed.tolist(), _floats(masked),
                         _floats(weights), _floats(out), _floats(pattern), _floats(head_out))

    def _keys_values(self, kind: str, layer: int, module, prefix: str) -> tuple[Tensor, Tensor]:
        """(S, K, D) keys and values: the hook points' for self-attention; for cross-attention the layer's own
        projection of the encoder output (the points stop at q: k and v are projected once per source)."""
        if kind != "cross":
            return self.cache[prefix + "hook_k"][0], self.cache[prefix + "hook_v"][0]
        with torch.no_grad():
            k, v = module.memory_kv(self.cache[_memory_point(self.model)])  # (1, K, S, D)
        return k[0].transpose(0, 1), v[0].transpose(0, 1)

    def _bias(self, kind: str, module, head: int, query: int, keys: int) -> Tensor | None:
        if kind == "cross" or module.positions != "alibi":
            return None
        device = self.cache_device
        bias = alibi_bias(module.heads, torch.tensor([query], device=device), torch.arange(keys, device=device),
                          module.causal)
        return bias[head, 0].float()  # (S,)

    def _allowed(self, kind: str, module, query: int, keys: int) -> Tensor:
        """The mask rule for this query over the keys: cross-attention sees the whole (unpadded) source."""
        positions = torch.arange(keys, device=self.cache_device)
        if kind == "cross":
            return torch.ones(keys, dtype=torch.bool, device=self.cache_device)
        return may_attend(torch.tensor(query, device=self.cache_device), positions, module.causal, module.window,
                          module.global_tokens)

    @property
    def cache_device(self) -> torch.device:
        return next(iter(self.cache.values())).device


def _stacks(model) -> dict[str, list]:
    """kind -> the attention modules of that kind, by layer."""
    family = model.config.family
    if family == "decoder-only":
        return {"decoder-self": [block.attn for block in model.decoder]}
    if family == "encoder-only":
        return {"encoder-self": [block.attn for block in model.encoder]}
    return {"encoder-self": [block.attn for block in model.encoder],
            "decoder-self": [block.attn for block in model.decoder],
            "cross": [block.cross for block in model.decoder]}


def _point_prefix(model, kind: str) -> str:
    encoder, decoder = stack_names(model.config.family)
    return encoder if kind == "encoder-self" else decoder


def _memory_point(model) -> str:
    """Where the pass has the encoder output that cross-attention projects: after the final norm, if any."""
    if model.encoder_norm is not None:
        return f"encoder.{FINAL_NORM}"
    return f"encoder.{len(model.encoder) - 1}.hook_resid_post"


def _wanted(model):
    memory = _memory_point(model) if model.config.family == "encoder-decoder" else None

    def wanted(name: str) -> bool:
        return name == memory or (".attn." in name or ".cross_attn." in name) and not name.endswith("scores")

    return wanted


def trace(model, src: Tensor | list[int], tgt: list[int] | None = None) -> HeadTrace:
    """One pass of `model` over `src` (ids, or a ViT's pixels (1, C, I, I)) and, for an encoder-decoder, the
    decoder input `tgt`, keeping what `HeadTrace.steps` reads. Runs in eval mode (dropout would make the
    pattern and the output disagree) and restores the model's mode after."""
    device = next(model.parameters()).device
    src_t = src.to(device) if isinstance(src, Tensor) else torch.tensor([src], device=device)  # (1, S)
    inputs = (src_t,) if tgt is None else (src_t, torch.tensor([tgt], device=device))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            _, cache = run_with_cache(model, *inputs, names=_wanted(model))
    finally:
        model.train(was_training)
    return HeadTrace(model, dict(cache))


def _floats(x: Tensor) -> list[float]:
    return x.detach().float().cpu().tolist()
