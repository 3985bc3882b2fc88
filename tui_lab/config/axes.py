"""The config's axes: each architecture choice's allowed values, the families where it applies and the companions a
value needs. One table, read by validation (`rules`), the CLI's --set, the app's form and the coverage test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
