"""A shape trace without running the model: per module, input shape, output shape and parameters.

What torchinfo prints, computed from the config. Module paths match `tui_lab.model` attribute names.
Dimension legend: N batch, S source length, T target length, E d_model, F d_ff, V vocab, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.params import (
    attention_params,
    expert_params,
    norm_params,
    position_params,
    router_params,
)
from tui_lab.config import ModelConfig

Shape = tuple[int, ...]


@dataclass(frozen=True)
class ShapeRow:
    path: str
    kind: str
    input_shape: Shape
    output_shape: Shape
    params: int
    depth: int = 0
    note: str = ""

    def to_dict(self) -> dict:
        return {"path": self.path, "kind": self.kind, "input": list(self.input_shape),
                "output": list(self.output_shape), "params": self.params, "note": self.note}


def _block_rows(c: ModelConfig, prefix: str, n: int, length: int, cross_len: int | None) -> list[ShapeRow]:
    """One layer's rows in forward order: pre-LN normalises before each sublayer, post-LN after it."""
    e, h = c.d_model, c.heads
    x = (n, length, e)
    attn = [ShapeRow(f"{prefix}.attn", "causal self-attention" if _causal(c, prefix) else "self-attention", x, x,
                     attention_params(c), 2, f"scores (N, H, L, L) = {(n, h, length, length)}{_kv_note(c)}")]
    sublayers = [("attn_norm", attn)]
    if cross_len is not None:
        sublayers.append(("cross_norm", [ShapeRow(f"{prefix}.cross", "cross-attention", x, x, attention_params(c), 2,
                                                  f"scores target x source = {(n, h, length, cross_len)}"
                                                  f"{_kv_note(c)}")]))
    sublayers.append(("ffn_norm", _ffn_rows(c, prefix, n, length)))
    rows: list[ShapeRow] = []
    for norm_name, body in sublayers:
        norm = ShapeRow(f"{prefix}.{norm_name}", c.norm, x, x, norm_params(c), 2)
        rows += [norm, *body] if c.norm_position == "pre" else [*body, norm]  # post-LN: LN(x + f(x))
    return rows


def _kv_note(c: ModelConfig) -> str:
    """Grouped-query attention: k and v have K heads, each shared by H/K query heads."""
    if c.n_kv_heads == c.heads:
        return ""
    return f"; k, v (N, K, L, D) with K = {c.n_kv_heads} kv heads, {c.heads // c.n_kv_heads} query heads each"


def _ffn_rows(c: ModelConfig, prefix: str, n: int, length: int) -> list[ShapeRow]:
    x, h = (n, length, c.d_model), (n, length, c.d_ff)
    if c.ffn == "moe":  # the router scores X experts; each token goes through K of them
        return [ShapeRow(f"{prefix}.ffn.router", "linear", x, (n, length, c.experts), router_params(c), 2,
                         f"top-{c.experts_per_token} of {c.experts}"),
                ShapeRow(f"{prefix}.ffn.experts", f"{c.experts} x FFN", x, x, c.experts * expert_params(c), 2,
                         f"each token: {c.experts_per_token} experts, {c.activation}, hidden {h}")]
    return [ShapeRow(f"{prefix}.ffn.up", "linear", x, h, expert_params(c) - _down(c), 2, c.activation),
            ShapeRow(f"{prefix}.ffn.down", "linear", h, x, _down(c), 2)]


def _down(c: ModelConfig) -> int:
    return c.d_ff * c.d_model + (c.d_model if c.bias else 0)


def _causal(c: ModelConfig, prefix: str) -> bool:
    return prefix.startswith("decoder")


def _embed_rows(c: ModelConfig, n: int, length: int) -> list[ShapeRow]:
    rows = [ShapeRow("tok_embed", "embedding", (n, length), (n, length, c.d_model), c.vocab * c.d_model, 1,
                     "x sqrt(d_model)" if c.embedding_scale == "sqrt_d_model" else "")]
    if c.positions in ("learned", "sinusoidal", "sinusoidal_halves"):
        rows.append(ShapeRow("pos_embed", f"{c.positions} positions", (length,), (length, c.d_model),
                             position_params(c), 1, "added to the token vectors"))
    return rows


def _stack_rows(c: ModelConfig, stack: str, layers: int, n: int, length: int, cross: int | None) -> list[ShapeRow]:
    x = (n, length, c.d_model)
    rows: list[ShapeRow] = []
    per_layer = sum(r.params for r in _block_rows(c, f"{stack}.0", n, length, cross))
    for i in range(layers):
        rows.append(ShapeRow(f"{stack}.{i}", f"{stack} block", x, x, per_layer, 1))
        rows += _block_rows(c, f"{stack}.{i}", n, length, cross)
    if c.final_norm:
        rows.append(ShapeRow(f"{stack}_norm", c.norm, x, x, norm_params(c), 1, "final norm"))
    return rows


def shape_trace(c: ModelConfig, batch: int = 1, seq_len: int = 16, src_len: int | None = None) -> list[ShapeRow]:
    """Rows in forward order for a batch of `batch` sequences of `seq_len` tokens (source `src_len`)."""
    n, t = batch, seq_len
    s = seq_len if src_len is None else src_len
    rows: list[ShapeRow] = []
    if c.has_encoder:
        rows += _embed_rows(c, n, s)
        rows += _stack_rows(c, "encoder", c.encoder_layers, n, s, None)
    if c.has_decoder:
        if c.family == "encoder-decoder":
            rows.append(ShapeRow("tok_embed", "embedding (shared)", (n, t), (n, t, c.d_model), 0, 1,
                                 "the source table, reused for the target"))
        else:
            rows += _embed_rows(c, n, t)
        cross = s if c.family == "encoder-decoder" else None
        rows += _stack_rows(c, "decoder", c.decoder_layers, n, t, cross)
    out_len = t if c.has_decoder else s
    rows.append(ShapeRow("lm_head", "linear", (n, out_len, c.d_model), (n, out_len, c.vocab),
                         0 if c.tie_embeddings else c.vocab * c.d_model, 1,
                         "tied to tok_embed" if c.tie_embeddings else ""))
    return rows
