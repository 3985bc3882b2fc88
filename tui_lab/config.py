"""The one config that drives every architecture in the lab.

Field names follow the 2017 paper (`d_model`, `d_ff`, `heads`). Every variant axis is a single string
field whose allowed values are listed in `CHOICES`; the model registries map each value to a builder.
This module imports no torch, so the app can paint counts and shapes before torch has loaded.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any

FAMILIES = ("encoder-decoder", "decoder-only", "encoder-only")


@dataclass(frozen=True)
class Axis:
    """One architecture axis: its allowed values and where a value other than its default applies.

    `families` lists the families where the axis may leave its default (the default is the neutral
    value that builds nothing extra). `samples` are the values the coverage test builds for an int or
    bool axis; `companions` are the other fields a value needs to be valid on its own (ffn 'moe' needs
    experts), so the test can build every pair of values.
    """

    values: tuple[Any, ...]
    families: tuple[str, ...] = FAMILIES
    companions: dict[Any, dict[str, Any]] = field(default_factory=dict)

    @property
    def is_choice(self) -> bool:
        return all(isinstance(v, str) for v in self.values)


# What `input = "patches"` needs to be valid on its own at the coverage test's size (d_model 16):
# a 12x12 image in 4x4 patches is 9 patch tokens plus the class token.
_PATCHES = {"image_size": 12, "patch_size": 4, "channels": 3, "head": "classifier", "classes": 2, "vocab": 0,
            "max_len": 10}

# The one table of the config's axes: validation, the CLI's --set, the app's form and the coverage
# test all read it. Add an axis here (and its field below) and every one of them follows.
AXES: dict[str, Axis] = {
    "family": Axis(FAMILIES),
    "norm": Axis(("layernorm", "rmsnorm", "batchnorm")),
    "norm_position": Axis(("post", "pre")),
    # relative (Shaw et al. 2018) and t5 (Raffel et al. 2020): tui_lab/model/relative.py
    "positions": Axis(("sinusoidal", "learned", "rope", "alibi", "sinusoidal_halves", "none", "relative", "t5")),
    # "none" (issue 13, seed 002's Q&A): no nonlinearity, so the FFN is down(up(x)), one linear map in disguise.
    # "geglu" (issue 27): GELU (tanh) on a gate branch times an up branch, T5 v1.1 / FLAN's "gated-gelu";
    # "reglu" (issue 38): ReLU on the gate branch, T5's "gated-relu" (Shazeer 2020)
    "activation": Axis(("relu", "gelu", "gelu_tanh", "swiglu", "silu", "none", "geglu", "reglu")),
    "embedding_scale": Axis(("none", "sqrt_d_model")),
    "tie_embeddings": Axis((True, False)),
    "bias": Axis((True, False)),
    "final_norm": Axis((True, False)),
    # Non-autoregressive decoding (seed 002 section 3.2): the decoder reads a row of BEGINs in one pass.
    "decoder_mode": Axis(("autoregressive", "nat-length-classifier", "nat-max-length"), families=("encoder-decoder",)),
    # grouped-query and local attention (issue 14): ints are the samples the coverage test builds
    "kv_heads": Axis((0, 1, 2)),
    "qkv_bias": Axis((False, True)),
    "attention_window": Axis((0, 1, 3)),
    "global_tokens": Axis((0, 1), companions={1: {"attention_window": 3}}),
    # Sparse mixture-of-experts (Switch, Fedus et al. 2021; Mixtral, Jiang et al. 2024): int samples 0/2/4.
    # ffn "none" (issue 29): attention-only blocks, no FFN and no FFN norm (Elhage et al. 2021's toy models)
    "ffn": Axis(("dense", "moe", "none"), companions={"dense": {"experts": 0, "experts_per_token": 0},
                                                      "moe": {"experts": 4, "experts_per_token": 2},
                                                      "none": {"experts": 0, "experts_per_token": 0}}),
    "experts": Axis((0, 2, 4), companions={2: {"ffn": "moe", "experts_per_token": 1},
                                           4: {"ffn": "moe", "experts_per_token": 2}}),
    "experts_per_token": Axis((0, 1, 2), companions={1: {"ffn": "moe", "experts": 2},
                                                     2: {"ffn": "moe", "experts": 4}}),
    # experiments (issue 15): scores divided by sqrt(d_head) (2017, section 3.2.1) or left as raw dot products
    "attention_scale": Axis(("sqrt_d_head", "none")),
    # Encoder-only heads and image input (issue 14). `input` comes before `head` so a refusal names the
    # axis a person set, not its companion.
    "input": Axis(("tokens", "patches"), ("encoder-only",), {"patches": _PATCHES}),
    "image_size": Axis((0, 12), ("encoder-only",)),
    "patch_size": Axis((0, 4), ("encoder-only",)),
    "channels": Axis((0, 3), ("encoder-only",)),
    "head": Axis(("lm", "mlm", "classifier"), ("encoder-only",), {"classifier": {"classes": 2}}),
    "classes": Axis((0, 2), ("encoder-only",)),
    "token_types": Axis((0, 2), ("encoder-only",)),
    "embedding_norm": Axis((False, True), ("encoder-only",)),
    "output_bias": Axis((False, True)),
    # copy mechanism (issue 13, seed 002 section 4 Tips 1): a pointer-generator over the source
    "copy": Axis((False, True), families=("encoder-decoder",)),
    # The original T5 (tied) rescales the decoder's output by d_model^-0.5 before the vocabulary (issue 27)
    "output_scale": Axis(("none", "inv_sqrt_d_model"), families=("encoder-decoder", "decoder-only")),
    # Attention that is not quadratic (issue 27, tui_lab/model/efficient.py): Linformer (Wang et al. 2020)
    # projects keys and values along the sequence to linformer_k rows; Performer (Choromanski et al. 2021)
    # replaces softmax with performer_features positive orthogonal random features (FAVOR+).
    "self_attention": Axis(("softmax", "linformer", "performer"),
                           companions={"linformer": {"linformer_k": 4}, "performer": {"performer_features": 8}}),
    "linformer_k": Axis((0, 4), companions={4: {"self_attention": "linformer"}}),
    "linformer_sharing": Axis(("headwise", "key-value", "none"), ("encoder-only",),
                              {v: {"self_attention": "linformer", "linformer_k": 4} for v in ("key-value", "none")}),
    "performer_features": Axis((0, 8), companions={8: {"self_attention": "performer"}}),
    # guided cross-attention (issue 27, seed 002 section 4 Tips 2): tui_lab/model/guided_cross.py
    "cross_attention": Axis(("softmax", "location-aware", "monotonic"), families=("encoder-decoder",)),
}
# Activations with a gate branch: three FFN matrices (gate, up, down) instead of two.
GATED = ("swiglu", "geglu", "reglu")

# Fields that are not axes but that presets may still omit (they keep their default): numbers that
# only Hugging Face checkpoints set.
OPTIONAL_FIELDS = ("rope_base", "relative_clip", "relative_buckets", "relative_max_distance")

# One tuple of allowed values per string axis (the app's selects and the CLI read these).
CHOICES: dict[str, tuple[str, ...]] = {name: axis.values for name, axis in AXES.items() if axis.is_choice}

# The five shortcuts a person reaches for first; `layers` sets every stack the family has.
SHORTCUTS = ("layers", "d_model", "heads", "d_ff", "vocab")


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
        _validate(self)

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


_DEFAULTS = {f.name: f.default for f in fields(ModelConfig)}


def field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(ModelConfig))


def field_types() -> dict[str, type]:
    hints = {"str": str, "int": int, "float": float, "bool": bool}
    return {f.name: hints[str(f.type)] for f in fields(ModelConfig)}


# Every count below is arithmetic on the config, but layers are listed one by one (the shape trace, the
# parameter table): ten times PaLM's 118 is past any model a lab looks at.
MAX_LAYERS = 1000


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _validate(c: ModelConfig) -> None:
    types = field_types()  # once: per field it was rebuilt ~11k times as the app started (0.5 s)
    for f in fields(c):
        _check_type(f.name, getattr(c, f.name), types[f.name])
    for name, axis in AXES.items():
        _validate_axis(c, name, axis)
    _validate_encoder_heads(c)
    for name in ("d_model", "heads", "d_ff", "max_len") + (() if c.input == "patches" else ("vocab",)):
        _check(getattr(c, name) > 0, f"{name} ({getattr(c, name)}) must be a positive integer")
    for name in ("encoder_layers", "decoder_layers"):
        _check(0 <= getattr(c, name) <= MAX_LAYERS, f"{name} ({getattr(c, name)}) must be from 0 to {MAX_LAYERS}")
    _check(c.d_model % c.heads == 0, f"d_model ({c.d_model}) must be divisible by heads ({c.heads})")
    _check(0.0 <= c.dropout < 1.0, f"dropout ({c.dropout}) must be in [0, 1)")
    _check(c.norm_eps > 0, f"norm_eps ({c.norm_eps}) must be positive")
    _check(c.rope_base > 1, f"rope_base ({c.rope_base}) must be greater than 1")
    if c.positions == "rope":
        _check(c.d_head % 2 == 0, f"positions 'rope' needs an even d_head; d_model/heads is {c.d_head}")
    _validate_stacks(c)
    _validate_nat(c)
    _validate_relative(c)
    _validate_self_attention(c)


def _validate_relative(c: ModelConfig) -> None:
    """Shaw's table needs a clip of 1 or more; T5's exact half of each direction's buckets needs a row
    (buckets >= 4) and its log-spaced half a range past it (max distance > buckets / 2)."""
    _check(c.relative_clip >= 1, f"relative_clip ({c.relative_clip}) must be 1 or more")
    _check(c.relative_buckets >= 4, f"relative_buckets ({c.relative_buckets}) must be 4 or more")
    _check(c.relative_max_distance > c.relative_buckets // 2,
           f"relative_max_distance ({c.relative_max_distance}) must be more than relative_buckets / 2 "
           f"({c.relative_buckets // 2})")


def is_nat(c: ModelConfig) -> bool:
    """A non-autoregressive decoder: no causal mask, the whole target in one decoder pass."""
    return c.decoder_mode != "autoregressive"


def _validate_nat(c: ModelConfig) -> None:
    # The length classifier has one class per length 0..max_len-1; max-length decoding feeds max_len BEGINs.
    if is_nat(c):
        _check(c.max_len >= 2, f"decoder_mode {c.decoder_mode!r} needs max_len >= 2 (it decodes up to max_len "
                               f"positions), got {c.max_len}")
    _validate_attention(c)
    _validate_moe(c)
    _validate_batchnorm(c)


def _validate_batchnorm(c: ModelConfig) -> None:
    """norm 'batchnorm' keeps padding out of its statistics with the padding mask, which only the blocks and
    the final norms are handed; the embedding norm and the MLM head's norm never see it."""
    _check(c.norm != "batchnorm" or not c.embedding_norm,
           "norm 'batchnorm' cannot be the embedding norm (it is not given the padding mask); use layernorm")
    _check(c.norm != "batchnorm" or c.head != "mlm",
           "norm 'batchnorm' cannot be the MLM head's norm (it is not given the padding mask); use layernorm")


def _validate_attention(c: ModelConfig) -> None:
    """Grouped-query and local attention: each query head group shares one k/v head; globals need a window."""
    for name in ("kv_heads", "attention_window", "global_tokens"):
        _check(getattr(c, name) >= 0, f"{name} ({getattr(c, name)}) must be 0 or more")
    _check(c.heads % c.n_kv_heads == 0, f"kv_heads ({c.kv_heads}) must divide heads ({c.heads})")
    _check(c.global_tokens == 0 or c.attention_window > 0,
           f"global_tokens ({c.global_tokens}) needs attention_window > 0 (with full attention every token is global)")


# Positions that add a bias to the score matrix, which neither approximation ever forms.
SCORE_BIAS_POSITIONS = ("alibi", "relative", "t5")


def _validate_self_attention(c: ModelConfig) -> None:
    """Linformer and Performer never form the L x L score matrix: no window mask, no score bias on it."""
    kind = c.self_attention
    _check(kind == "linformer" or c.linformer_k == 0, f"linformer_k ({c.linformer_k}) must be 0 unless "
                                                     f"self_attention is 'linformer'")
    _check(kind == "linformer" or c.linformer_sharing == "headwise",
           f"linformer_sharing ({c.linformer_sharing!r}) applies to self_attention 'linformer' only")
    _check(kind == "performer" or c.performer_features == 0,
           f"performer_features ({c.performer_features}) must be 0 unless self_attention is 'performer'")
    if kind == "softmax":
        return
    if kind == "linformer":
        _check(not c.has_decoder, "self_attention 'linformer' mixes every position into each projected key, future "
                                  "ones included, so a causal decoder cannot use it: use an encoder-only model, "
                                  "or performer")
        _check(0 <= c.linformer_k <= c.max_len, f"linformer_k ({c.linformer_k}) must be from 0 (max_len / 4) to "
                                                f"max_len ({c.max_len}) for self_attention 'linformer'")
    else:
        _check(c.performer_features >= 0, f"performer_features ({c.performer_features}) must be 0 (d_head ln d_head) "
                                          f"or more for self_attention 'performer'")
    _check(c.attention_window == 0, f"attention_window ({c.attention_window}) must be 0 for self_attention "
                                    f"{kind!r}: it forms no score matrix to mask")
    _check(c.positions not in SCORE_BIAS_POSITIONS, f"positions {c.positions!r} adds a bias to the scores, which "
                                                    f"self_attention {kind!r} never forms; use rope, learned or "
                                                    f"sinusoidal")


def _validate_moe(c: ModelConfig) -> None:
    """A dense FFN (or none) has no experts; a sparse one needs two or more and routes each token to 1..experts."""
    if c.ffn != "moe":
        _check(c.experts == 0, f"experts ({c.experts}) must be 0 unless ffn is 'moe'")
        _check(c.experts_per_token == 0, f"experts_per_token ({c.experts_per_token}) must be 0 unless ffn is 'moe'")
        return
    _check(c.experts >= 2, f"experts ({c.experts}) must be at least 2 for ffn 'moe'")
    _check(1 <= c.experts_per_token <= c.experts,
           f"experts_per_token ({c.experts_per_token}) must be between 1 and experts ({c.experts}) for ffn 'moe'")


def _validate_axis(c: ModelConfig, name: str, axis: Axis) -> None:
    value = getattr(c, name)
    if axis.is_choice:
        _check(value in axis.values, f"{name} ({value!r}) must be one of: {', '.join(axis.values)}")
    if c.family not in axis.families and value != _DEFAULTS[name]:
        where = " or ".join(axis.families)
        _check(False, f"{name} ({value!r}) applies to {where} models only; this one is {c.family}")


def _validate_encoder_heads(c: ModelConfig) -> None:
    """BERT's and ViT's cross-field rules: a classifier needs classes; patches need a whole grid."""
    for name in ("classes", "token_types", "image_size", "patch_size", "channels"):
        _check(getattr(c, name) >= 0, f"{name} ({getattr(c, name)}) must be 0 or more")
    if c.head == "classifier":
        _check(c.classes >= 2, f"classes ({c.classes}) must be at least 2 for head 'classifier'")
        _check(not c.output_bias, "output_bias applies to heads lm and mlm; the classifier always has a bias")
    if c.input == "patches":
        _validate_patches(c)


def _validate_patches(c: ModelConfig) -> None:
    for name in ("image_size", "patch_size", "channels"):
        _check(getattr(c, name) > 0, f"{name} ({getattr(c, name)}) must be a positive integer for input 'patches'")
    _check(c.image_size % c.patch_size == 0,
           f"image_size ({c.image_size}) must be divisible by patch_size ({c.patch_size})")
    _check(c.head == "classifier", f"head ({c.head!r}) must be 'classifier' for input 'patches'")
    _check(c.vocab == 0, f"vocab ({c.vocab}) must be 0 for input 'patches' (no token table)")
    _check(c.token_types == 0, f"token_types ({c.token_types}) must be 0 for input 'patches'")
    tokens = (c.image_size // c.patch_size) ** 2 + 1
    _check(c.max_len == tokens, f"max_len ({c.max_len}) must be {tokens} for input 'patches': "
                                f"(image_size/patch_size)^2 patches plus the class token")


def _validate_stacks(c: ModelConfig) -> None:
    if c.family == "encoder-decoder":
        _check(c.encoder_layers > 0, "encoder_layers must be at least 1 for an encoder-decoder")
        _check(c.decoder_layers > 0, "decoder_layers must be at least 1 for an encoder-decoder")
    elif c.family == "decoder-only":
        _check(c.encoder_layers == 0, "encoder_layers must be 0 for a decoder-only model")
        _check(c.decoder_layers > 0, "decoder_layers must be at least 1 for a decoder-only model")
    else:
        _check(c.decoder_layers == 0, "decoder_layers must be 0 for an encoder-only model")
        _check(c.encoder_layers > 0, "encoder_layers must be at least 1 for an encoder-only model")


def _check_type(name: str, value: Any, kind: type) -> None:
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        # nan compares false with every bound below, and inf passes "positive": refuse both here, once.
        _check(not ok or math.isfinite(value), f"{name} must be a finite number, got {value!r}")
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    _check(ok, f"{name} must be {_KIND_NAMES[kind]}, got {value!r}")


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def parse_value(name: str, text: str) -> Any:
    """Turn a person's text for field `name` into the field's type, or raise a one-line ValueError."""
    types = field_types()
    if name in SHORTCUTS and name not in types:
        types[name] = int
    _check(name in types, f"unknown field {name!r}; known fields: {', '.join(field_names())}")
    kind, text = types[name], text.strip()
    try:
        if kind is bool:
            lowered = text.lower()
            _check(lowered in _BOOLS, f"{name} must be true or false, got {text!r}")
            return _BOOLS[lowered]
        return kind(text)
    except ValueError as err:
        if str(err).startswith(name):
            raise
        raise ValueError(f"{name} must be {_KIND_NAMES[kind]}, got {text!r}") from None


_BOOLS = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}


def with_overrides(config: ModelConfig, **overrides: Any) -> ModelConfig:
    """Apply field overrides and the shortcuts; `layers` sets every stack the family has."""
    known = set(field_names()) | set(SHORTCUTS)
    for key in overrides:
        _check(key in known, f"unknown field {key!r}; known fields: {', '.join(sorted(known))}")
    changes = dict(overrides)
    if "layers" in changes:
        layers = changes.pop("layers")
        _check_type("layers", layers, int)
        _check(layers > 0, f"layers ({layers}) must be a positive integer")
        family = changes.get("family", config.family)
        changes.setdefault("encoder_layers", layers if family != "decoder-only" else 0)
        changes.setdefault("decoder_layers", layers if family != "encoder-only" else 0)
    return dataclasses.replace(config, **changes)
