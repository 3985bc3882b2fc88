"""The config's rules: a `ModelConfig` that breaks one raises a one-line ValueError naming the field and the rule.

Each rule is checked when a config is made (`ModelConfig.__post_init__`), so no invalid config exists anywhere in
the lab. The axes' own rules (allowed values, the families an axis applies to) are read from `axes.AXES`.
"""

from __future__ import annotations

import math
from dataclasses import fields
from functools import cache
from typing import Any

from tui_lab.config.axes import AXES, Axis

# A ModelConfig: model_config.py imports these rules, so they do not import it back (one direction, no cycle).
ModelConfig = Any


@cache
def types_and_defaults(cls: type) -> tuple[dict[str, type], dict[str, Any]]:
    """The config class's field types and defaults."""
    hints = {"str": str, "int": int, "float": float, "bool": bool}
    return {f.name: hints[str(f.type)] for f in fields(cls)}, {f.name: f.default for f in fields(cls)}


# Every count below is arithmetic on the config, but layers are listed one by one (the shape trace, the
# parameter table): ten times PaLM's 118 is past any model a lab looks at.
MAX_LAYERS = 1000


def check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def validate(c: ModelConfig) -> None:
    """Raise a one-line ValueError naming the field and the rule `c` breaks, if it breaks one."""
    types, _ = types_and_defaults(type(c))  # once per class: per field it was rebuilt ~11k times at start (0.5 s)
    for f in fields(c):
        check_type(f.name, getattr(c, f.name), types[f.name])
    for name, axis in AXES.items():
        _validate_axis(c, name, axis)
    _validate_encoder_heads(c)
    for name in ("d_model", "heads", "d_ff", "max_len") + (() if c.input == "patches" else ("vocab",)):
        check(getattr(c, name) > 0, f"{name} ({getattr(c, name)}) must be a positive integer")
    for name in ("encoder_layers", "decoder_layers"):
        check(0 <= getattr(c, name) <= MAX_LAYERS, f"{name} ({getattr(c, name)}) must be from 0 to {MAX_LAYERS}")
    check(c.d_model % c.heads == 0, f"d_model ({c.d_model}) must be divisible by heads ({c.heads})")
    check(0.0 <= c.dropout < 1.0, f"dropout ({c.dropout}) must be in [0, 1)")
    check(c.norm_eps > 0, f"norm_eps ({c.norm_eps}) must be positive")
    check(c.rope_base > 1, f"rope_base ({c.rope_base}) must be greater than 1")
    if c.positions == "rope":
        check(c.d_head % 2 == 0, f"positions 'rope' needs an even d_head; d_model/heads is {c.d_head}")
    _validate_stacks(c)
    _validate_nat(c)
    _validate_relative(c)
    _validate_self_attention(c)


def _validate_relative(c: ModelConfig) -> None:
    """Shaw's table needs a clip of 1 or more; T5's exact half of each direction's buckets needs a row
    (buckets >= 4) and its log-spaced half a range past it (max distance > buckets / 2)."""
    check(c.relative_clip >= 1, f"relative_clip ({c.relative_clip}) must be 1 or more")
    check(c.relative_buckets >= 4, f"relative_buckets ({c.relative_buckets}) must be 4 or more")
    check(c.relative_max_distance > c.relative_buckets // 2,
           f"relative_max_distance ({c.relative_max_distance}) must be more than relative_buckets / 2 "
           f"({c.relative_buckets // 2})")


def is_nat(c: ModelConfig) -> bool:
    """A non-autoregressive decoder: no causal mask, the whole target in one decoder pass."""
    return c.decoder_mode != "autoregressive"


def _validate_nat(c: ModelConfig) -> None:
    # The length classifier has one class per length 0..max_len-1; max-length decoding feeds max_len BEGINs.
    if is_nat(c):
        check(c.max_len >= 2, f"decoder_mode {c.decoder_mode!r} needs max_len >= 2 (it decodes up to max_len "
                               f"positions), got {c.max_len}")
    _validate_attention(c)
    _validate_moe(c)
    _validate_batchnorm(c)


def _validate_batchnorm(c: ModelConfig) -> None:
    """norm 'batchnorm' keeps padding out of its statistics with the padding mask, which only the blocks and
    the final norms are handed; the embedding norm and the MLM head's norm never see it."""
    check(c.norm != "batchnorm" or not c.embedding_norm,
           "norm 'batchnorm' cannot be the embedding norm (it is not given the padding mask); use layernorm")
    check(c.norm != "batchnorm" or c.head != "mlm",
           "norm 'batchnorm' cannot be the MLM head's norm (it is not given the padding mask); use layernorm")


def _validate_attention(c: ModelConfig) -> None:
    """Grouped-query and local attention: each query head group shares one k/v head; globals need a window."""
    for name in ("kv_heads", "attention_window", "global_tokens"):
        check(getattr(c, name) >= 0, f"{name} ({getattr(c, name)}) must be 0 or more")
    check(c.heads % c.n_kv_heads == 0, f"kv_heads ({c.kv_heads}) must divide heads ({c.heads})")
    check(c.global_tokens == 0 or c.attention_window > 0,
           f"global_tokens ({c.global_tokens}) needs attention_window > 0 (with full attention every token is global)")


# Positions that add a bias to the score matrix, which neither approximation ever forms.
SCORE_BIAS_POSITIONS = ("alibi", "relative", "t5")


def _validate_self_attention(c: ModelConfig) -> None:
    """Linformer and Performer never form the L x L score matrix: no window mask, no score bias on it."""
    kind = c.self_attention
    check(kind == "linformer" or c.linformer_k == 0, f"linformer_k ({c.linformer_k}) must be 0 unless "
                                                     f"self_attention is 'linformer'")
    check(kind == "linformer" or c.linformer_sharing == "headwise",
           f"linformer_sharing ({c.linformer_sharing!r}) applies to self_attention 'linformer' only")
    check(kind == "performer" or c.performer_features == 0,
           f"performer_features ({c.performer_features}) must be 0 unless self_attention is 'performer'")
    if kind == "softmax":
        return
    if kind == "linformer":
        check(not c.has_decoder, "self_attention 'linformer' mixes every position into each projected key, future "
                                  "ones included, so a causal decoder cannot use it: use an encoder-only model, "
                                  "or performer")
        check(0 <= c.linformer_k <= c.max_len, f"linformer_k ({c.linformer_k}) must be from 0 (max_len / 4) to "
                                                f"max_len ({c.max_len}) for self_attention 'linformer'")
    else:
        check(c.performer_features >= 0, f"performer_features ({c.performer_features}) must be 0 (d_head ln d_head) "
                                          f"or more for self_attention 'performer'")
    check(c.attention_window == 0, f"attention_window ({c.attention_window}) must be 0 for self_attention "
                                    f"{kind!r}: it forms no score matrix to mask")
    check(c.positions not in SCORE_BIAS_POSITIONS, f"positions {c.positions!r} adds a bias to the scores, which "
                                                    f"self_attention {kind!r} never forms; use rope, learned or "
                                                    f"sinusoidal")


def _validate_moe(c: ModelConfig) -> None:
    """A dense FFN (or none) has no experts; a sparse one needs two or more and routes each token to 1..experts."""
    if c.ffn != "moe":
        check(c.experts == 0, f"experts ({c.experts}) must be 0 unless ffn is 'moe'")
        check(c.experts_per_token == 0, f"experts_per_token ({c.experts_per_token}) must be 0 unless ffn is 'moe'")
        return
    check(c.experts >= 2, f"experts ({c.experts}) must be at least 2 for ffn 'moe'")
    check(1 <= c.experts_per_token <= c.experts,
           f"experts_per_token ({c.experts_per_token}) must be between 1 and experts ({c.experts}) for ffn 'moe'")


def _validate_axis(c: ModelConfig, name: str, axis: Axis) -> None:
    value = getattr(c, name)
    if axis.is_choice:
        check(value in axis.values, f"{name} ({value!r}) must be one of: {', '.join(axis.values)}")
    if c.family not in axis.families and value != types_and_defaults(type(c))[1][name]:
        where = " or ".join(axis.families)
        check(False, f"{name} ({value!r}) applies to {where} models only; this one is {c.family}")


def _validate_encoder_heads(c: ModelConfig) -> None:
    """BERT's and ViT's cross-field rules: a classifier needs classes; patches need a whole grid."""
    for name in ("classes", "token_types", "image_size", "patch_size", "channels"):
        check(getattr(c, name) >= 0, f"{name} ({getattr(c, name)}) must be 0 or more")
    if c.head == "classifier":
        check(c.classes >= 2, f"classes ({c.classes}) must be at least 2 for head 'classifier'")
        check(not c.output_bias, "output_bias applies to heads lm and mlm; the classifier always has a bias")
    if c.input == "patches":
        _validate_patches(c)


def _validate_patches(c: ModelConfig) -> None:
    for name in ("image_size", "patch_size", "channels"):
        check(getattr(c, name) > 0, f"{name} ({getattr(c, name)}) must be a positive integer for input 'patches'")
    check(c.image_size % c.patch_size == 0,
           f"image_size ({c.image_size}) must be divisible by patch_size ({c.patch_size})")
    check(c.head == "classifier", f"head ({c.head!r}) must be 'classifier' for input 'patches'")
    check(c.vocab == 0, f"vocab ({c.vocab}) must be 0 for input 'patches' (no token table)")
    check(c.token_types == 0, f"token_types ({c.token_types}) must be 0 for input 'patches'")
    tokens = (c.image_size // c.patch_size) ** 2 + 1
    check(c.max_len == tokens, f"max_len ({c.max_len}) must be {tokens} for input 'patches': "
                                f"(image_size/patch_size)^2 patches plus the class token")


def _validate_stacks(c: ModelConfig) -> None:
    if c.family == "encoder-decoder":
        check(c.encoder_layers > 0, "encoder_layers must be at least 1 for an encoder-decoder")
        check(c.decoder_layers > 0, "decoder_layers must be at least 1 for an encoder-decoder")
    elif c.family == "decoder-only":
        check(c.encoder_layers == 0, "encoder_layers must be 0 for a decoder-only model")
        check(c.decoder_layers > 0, "decoder_layers must be at least 1 for a decoder-only model")
    else:
        check(c.decoder_layers == 0, "decoder_layers must be 0 for an encoder-only model")
        check(c.encoder_layers > 0, "encoder_layers must be at least 1 for an encoder-only model")


def check_type(name: str, value: Any, kind: type) -> None:
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        # nan compares false with every bound below, and inf passes "positive": refuse both here, once.
        check(not ok or math.isfinite(value), f"{name} must be a finite number, got {value!r}")
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    check(ok, f"{name} must be {KIND_NAMES[kind]}, got {value!r}")


KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
