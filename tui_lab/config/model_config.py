"""`ModelConfig`: the one frozen dataclass every architecture is built from, and how a person's text sets its fields.

Field names follow the 2017 paper (`d_model`, `d_ff`, `heads`). No torch here.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any

from tui_lab.config.axes import SHORTCUTS
from tui_lab.config.rules import KIND_NAMES, check, check_type, types_and_defaults, validate


@dataclass(frozen=True)
class ModelConfig:
    """A Transformer of any of the lab's families, in the paper's vocabulary."""

    name: str = "custom"
    family: str = "decoder-only"
    encoder_layers: int = 0
    decoder_layers: int = 2
    d_model: int = 64
    heads: int = 4
    d_ff: int = 256
    vocab: int = 256
    max_len: int = 128
    norm: str = "layernorm"
    norm_position: str = "pre"
    norm_eps: float = 1e-5
    positions: str = "learned"
    activation: str = "gelu_tanh"
    embedding_scale: str = "none"
    tie_embeddings: bool = True
    bias: bool = True
    final_norm: bool = True
    dropout: float = 0.1
    source: str = field(default="", compare=False)
    # Non-autoregressive decoding (tui_lab/model/nat.py): 'autoregressive' builds what the lab always built.
    decoder_mode: str = "autoregressive"
    # grouped-query attention (Ainslie et al. 2023): kv_heads 0 = heads (MHA), 1 = MQA (Shazeer 2019);
    # qkv_bias gives q/k/v biases even without `bias` (Qwen2). Local attention (Beltagy et al. 2020,
    # Longformer): attention_window 0 = full, else keys per query; global_tokens attend/are attended everywhere.
    kv_heads: int = 0
    qkv_bias: bool = False
    attention_window: int = 0
    global_tokens: int = 0
    # Sparse mixture-of-experts: ffn "moe" routes each token to experts_per_token of `experts` FFNs;
    # ffn "none": attention-only blocks (the induction-heads experiment's models).
    ffn: str = "dense"
    experts: int = 0
    experts_per_token: int = 0
    # Hugging Face families (hf-families): RoPE's base (Llama 2 10000, Llama 3 500000, Qwen2 1e6); no parameters.
    rope_base: float = 10000.0
    # Relative positions (tui_lab/model/relative.py): Shaw's clip k (distances past it share a row), T5's
    # buckets and the distance where its log-spaced buckets stop (T5's 32 and 128).
    relative_clip: int = 16
    relative_buckets: int = 32
    relative_max_distance: int = 128
    # experiments (issue 15): "none" leaves q k^T unscaled, to watch softmax saturate as d_head grows
    attention_scale: str = "sqrt_d_head"
    # Encoder-only heads and image input (BERT, ViT; issue 14). The defaults build what the lab built before.
    head: str = "lm"
    classes: int = 0
    token_types: int = 0
    embedding_norm: bool = False
    output_bias: bool = False
    input: str = "tokens"
    image_size: int = 0
    patch_size: int = 0
    channels: int = 0
    # copy mechanism (issue 13): p_gen mixes the vocabulary with the cross-attention over the source
    copy: bool = False
    # T5 (tied embeddings): the last decoder state times d_model^-0.5 before the output layer; no parameters
    output_scale: str = "none"
    # Approximate self-attention (issue 27): 'softmax' is exact; Linformer's E and F are (max_len, linformer_k),
    # shared by a layer's heads ('headwise'), one for K and V ('key-value') or one per kv head ('none').
    # 0 picks a default, as kv_heads 0 does: k = max_len / 4, m = d_head ln(d_head) (`linformer_rows`, `n_features`).
    self_attention: str = "softmax"
    linformer_k: int = 0
    linformer_sharing: str = "headwise"
    performer_features: int = 0
    # guided cross-attention (issue 27): location-aware (Chorowski et al. 2015) or monotonic (Raffel et al. 2017)
    cross_attention: str = "softmax"

    def __post_init__(self) -> None:
        validate(self)

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads: `kv_heads`, or one per query head when it is 0 (multi-head attention)."""
        return self.kv_heads or self.heads

    @property
    def linformer_rows(self) -> int:
        """Linformer's k: `linformer_k`, or max_len / 4 when it is 0."""
        return self.linformer_k or max(1, self.max_len // 4)

    @property
    def n_features(self) -> int:
        """Performer's m: `performer_features`, or d_head ln(d_head) when it is 0 (Choromanski et al. 2021,
        theorem 4: m = O(d log d) random features suffice), at least d_head (one orthogonal block)."""
        return self.performer_features or max(self.d_head, round(self.d_head * math.log(self.d_head)))

    @property
    def has_encoder(self) -> bool:
        return self.family in ("encoder-decoder", "encoder-only")

    @property
    def has_decoder(self) -> bool:
        return self.family in ("encoder-decoder", "decoder-only")

    @property
    def layers(self) -> int:
        return self.encoder_layers + self.decoder_layers

    def replace(self, **changes: Any) -> ModelConfig:
        """A copy with `changes` applied (shortcuts included), validated."""
        return with_overrides(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(ModelConfig))


def field_types() -> dict[str, type]:
    return dict(types_and_defaults(ModelConfig)[0])  # a copy: parse_value adds the shortcuts to it


def parse_value(name: str, text: str) -> Any:
    """Turn a person's text for field `name` into the field's type, or raise a one-line ValueError."""
    types = field_types()
    if name in SHORTCUTS and name not in types:
        types[name] = int
    check(name in types, f"unknown field {name!r}; known fields: {', '.join(field_names())}")
    kind, text = types[name], text.strip()
    try:
        if kind is bool:
            lowered = text.lower()
            check(lowered in _BOOLS, f"{name} must be true or false, got {text!r}")
            return _BOOLS[lowered]
        return kind(text)
    except ValueError as err:
        if str(err).startswith(name):
            raise
        raise ValueError(f"{name} must be {KIND_NAMES[kind]}, got {text!r}") from None


_BOOLS = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}


def with_overrides(config: ModelConfig, **overrides: Any) -> ModelConfig:
    """Apply field overrides and the shortcuts; `layers` sets every stack the family has."""
    known = set(field_names()) | set(SHORTCUTS)
    for key in overrides:
        check(key in known, f"unknown field {key!r}; known fields: {', '.join(sorted(known))}")
    changes = dict(overrides)
    if "layers" in changes:
        layers = changes.pop("layers")
        check_type("layers", layers, int)
        check(layers > 0, f"layers ({layers}) must be a positive integer")
        family = changes.get("family", config.family)
        changes.setdefault("encoder_layers", layers if family != "decoder-only" else 0)
        changes.setdefault("decoder_layers", layers if family != "encoder-only" else 0)
    return dataclasses.replace(config, **changes)
