"""A shape trace without running the model: per module, input shape, output shape and parameters.

What torchinfo prints, computed from the config. Module paths match `tui_lab.model` attribute names.
Dimension legend: N batch, S source length, T target length, E d_model, F d_ff, V vocab, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.efficient import scores_note
from tui_lab.analysis.params import (
    attention_params,
    classifier_params,
    expert_params,
    length_classifier_params,
    linear,
    linformer_params,
    norm_params,
    output_params,
    patch_params,
    position_params,
    router_params,
)
from tui_lab.config import ModelConfig, is_nat

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
                     attention_params(c) + linformer_params(c), 2, f"{scores_note(c, n, length)}{_kv_note(c)}")]
    sublayers = [("attn_norm", attn)]
    if cross_len is not None:
        sublayers.append(("cross_norm", [ShapeRow(f"{prefix}.cross", "cross-attention", x, x, attention_params(c), 2,
                                                  f"scores target x source = {(n, h, length, cross_len)}"
                                                  f"{_kv_note(c)}")]))
    if c.ffn != "none":  # an attention-only block has no FFN and no FFN norm
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
    return prefix.startswith("decoder") and not is_nat(c)  # a NAT decoder sees every position


def _embed_rows(c: ModelConfig, n: int, length: int) -> list[ShapeRow]:
    x = (n, length, c.d_model)
    scale = "x sqrt(d_model)" if c.embedding_scale == "sqrt_d_model" else ""
    if c.input == "patches":
        image, p = (n, c.channels, c.image_size, c.image_size), c.patch_size
        rows = [ShapeRow("patch_embed", "patch embedding", image, x, patch_params(c), 1,
                         f"conv {p}x{p} stride {p}, then the class token first")]
    else:
        rows = [ShapeRow("tok_embed", "embedding", (n, length), x, c.vocab * c.d_model, 1, scale)]
    if c.token_types:
        rows.append(ShapeRow("type_embed", "embedding", (n, length), x, c.token_types * c.d_model, 1,
                             "token types, added"))
    if c.positions in ("learned", "sinusoidal", "sinusoidal_halves"):
        rows.append(ShapeRow("pos_embed", f"{c.positions} positions", (length,), (length, c.d_model),
                             position_params(c), 1, "added to the token vectors"))
    if c.positions == "t5":  # model/relative.py: each stack's first layer holds the table, every layer adds it
        rows.append(ShapeRow("t5_bias", "t5 positions", (length, length), (c.heads, length, length),
                             position_params(c), 1, "bucket bias per head, added to every layer's scores"))
    if c.positions == "relative":
        rows.append(ShapeRow("relative", "relative positions", (length, length), (length, length, c.d_head),
                             position_params(c), 1, f"key and value rows per layer, distances clipped at "
                                                    f"{c.relative_clip}"))
    if c.embedding_norm:
        rows.append(ShapeRow("embed_norm", c.norm, x, x, norm_params(c), 1, "on the embedding sum"))
    return rows


def _output_rows(c: ModelConfig, n: int, length: int) -> list[ShapeRow]:
    """The head: BERT's transform before the vocabulary, or one label per sequence."""
    x, e = (n, length, c.d_model), c.d_model
    if c.head == "classifier":
        how = "on the class token" if c.input == "patches" else "mean over real tokens"
        return [ShapeRow("head.out", "linear", (n, e), (n, c.classes), classifier_params(c), 1, how)]
    rows = []
    if c.head == "mlm":
        rows += [ShapeRow("head.dense", "linear", x, x, linear(e, e, c.bias), 1, c.activation),
                 ShapeRow("head.norm", c.norm, x, x, norm_params(c), 1)]
    notes = ["tied to tok_embed" if c.tie_embeddings else "", "+ bias" if c.output_bias else ""]
    rows.append(ShapeRow("lm_head", "linear", x, (n, length, c.vocab), output_params(c), 1,
                         ", ".join(note for note in notes if note)))
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


def image_length(c: ModelConfig) -> int | None:
    """An image input's length, fixed by its patches: the whole grid plus the class token (max_len, as the config
    rules require); None for text, whose length is asked for."""
    return c.max_len if c.input == "patches" else None


def shape_trace(c: ModelConfig, batch: int = 1, seq_len: int = 16, src_len: int | None = None) -> list[ShapeRow]:
    """Rows in forward order for a batch of `batch` sequences of `seq_len` tokens (source `src_len`)."""
    n, t = batch, seq_len
    s = seq_len if src_len is None else src_len
    s = image_length(c) or s
    rows: list[ShapeRow] = []
    if c.has_encoder:
        rows += _embed_rows(c, n, s)
        rows += _stack_rows(c, "encoder", c.encoder_layers, n, s, None)
    if length_classifier_params(c):
        rows.append(ShapeRow("length_classifier", "linear", (n, s, c.d_model), (n, c.max_len),
                             length_classifier_params(c), 1, "NAT: mean of the memory -> a length per source"))
    if c.has_decoder:
        if c.family == "encoder-decoder":
            rows.append(ShapeRow("tok_embed", "embedding (shared)", (n, t), (n, t, c.d_model), 0, 1,
                                 "the source table, reused for the target"))
        else:
            rows += _embed_rows(c, n, t)
        cross = s if c.family == "encoder-decoder" else None
        rows += _stack_rows(c, "decoder", c.decoder_layers, n, t, cross)
    return rows + _output_rows(c, n, t if c.has_decoder else s)
