"""GPT-2's config.json <-> our ModelConfig, both ways, with every refusal naming its field.

GPT-2 is one point in our design space: decoder-only, pre-LN with a final LN, learned positions,
biases everywhere, no embedding scale. Its `config.json` fields use Hugging Face's names (`n_embd`,
`n_head`, `n_inner`...); the defaults below are `GPT2Config`'s, so a sparse config means what HF
thinks it means. No torch here: reading a config must be instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_lab.config import AXES, ModelConfig

# HF activation names -> ours. gelu_new, gelu_pytorch_tanh and gelu_fast are all the tanh approximation.
ACTIVATIONS_FROM_HF = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "gelu": "gelu",
    "gelu_python": "gelu",
    "relu": "relu",
}
ACTIVATIONS_TO_HF = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu"}

# GPT2Config's defaults for the fields we read.
HF_DEFAULTS: dict[str, Any] = {
    "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None,
    "activation_function": "gelu_new", "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-5,
    "tie_word_embeddings": True, "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
    "add_cross_attention": False,
}

# Flags whose non-default value changes the maths into something our model does not compute.
UNSUPPORTED_FLAGS = {
    "scale_attn_weights": (False, "attention without the 1/sqrt(d_head) scale"),
    "scale_attn_by_inverse_layer_idx": (True, "attention scaled by 1/layer"),
    "add_cross_attention": (True, "cross-attention blocks"),
}

# What an export needs from our config: (field, the value GPT-2 has, why).
EXPORT_RULES = (
    ("family", "decoder-only", "GPT-2 is a decoder-only stack"),
    ("positions", "learned", "GPT-2 adds learned position vectors (wpe)"),
    ("norm", "layernorm", "GPT-2 uses LayerNorm"),
    ("norm_position", "pre", "GPT-2 normalises before each sublayer (pre-LN)"),
    ("final_norm", True, "GPT-2 ends with a final LayerNorm (ln_f)"),
    ("bias", True, "GPT-2's Conv1D and LayerNorm layers all have biases"),
    ("embedding_scale", "none", "GPT-2 does not scale its embeddings"),
    ("attention_scale", "sqrt_d_head", "GPT-2 divides its scores by sqrt(d_head)"),
    ("kv_heads", 0, "GPT-2 gives every query head its own k/v head"),
    ("attention_window", 0, "GPT-2 attends to every earlier token"),
)


def read_config_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path.name}: cannot read it ({err})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path.name}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: must hold a JSON object, got {type(data).__name__}")
    return data


def model_config_from_hf(hf: dict[str, Any], name: str = "gpt2") -> ModelConfig:
    """Our ModelConfig for a GPT-2 config.json, or a one-line ValueError naming the HF field."""
    model_type = hf.get("model_type")
    if model_type != "gpt2":
        raise ValueError(f"config.json: model_type is {model_type!r}; only 'gpt2' checkpoints can be loaded")
    get = with_defaults(hf, HF_DEFAULTS)
    for field, (bad, what) in UNSUPPORTED_FLAGS.items():
        if get[field] == bad:
            raise ValueError(f"config.json: {field} is {bad}; our model has no {what}")
    sizes = positive_ints(get, ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"))
    check_divisible(sizes, "n_embd", "n_head")
    d_ff = 4 * sizes["n_embd"] if get["n_inner"] is None else _positive_int("n_inner", get["n_inner"])
    activation = hf_activation("activation_function", get["activation_function"])
    return ModelConfig(
        name=name, family="decoder-only", encoder_layers=0, decoder_layers=sizes["n_layer"],
        d_model=sizes["n_embd"], heads=sizes["n_head"], d_ff=d_ff, vocab=sizes["vocab_size"],
        max_len=sizes["n_positions"], norm="layernorm", norm_position="pre",
        norm_eps=_number("layer_norm_epsilon", get["layer_norm_epsilon"], low=0.0, low_open=True),
        positions="learned", activation=activation, embedding_scale="none",
        tie_embeddings=_bool("tie_word_embeddings", get["tie_word_embeddings"]), bias=True, final_norm=True,
        dropout=_number("resid_pdrop", get["resid_pdrop"], low=0.0, high=1.0), source=f"Hugging Face {name}",
    )


def hf_config_from(config: ModelConfig, bos_id: int | None, eos_id: int | None, dtype: str) -> dict[str, Any]:
    """The config.json that makes `GPT2LMHeadModel` compute what `config` computes."""
    check_exportable(config)
    return {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
        "vocab_size": config.vocab, "n_positions": config.max_len, "n_embd": config.d_model,
        "n_layer": config.decoder_layers, "n_head": config.heads, "n_inner": config.d_ff,
        "activation_function": ACTIVATIONS_TO_HF[config.activation], "layer_norm_epsilon": config.norm_eps,
        "resid_pdrop": config.dropout, "embd_pdrop": config.dropout, "attn_pdrop": config.dropout,
        "tie_word_embeddings": config.tie_embeddings, "scale_attn_weights": True,
        # transformers 5 reads `dtype`, 4.x `torch_dtype`; both are silent about the other.
        "bos_token_id": bos_id, "eos_token_id": eos_id, "dtype": dtype, "torch_dtype": dtype,
    }


def check_exportable(config: ModelConfig) -> None:
    """ValueError naming the first field GPT-2 cannot express, and why."""
    for field, wanted, why in EXPORT_RULES:
        value = getattr(config, field)
        if value != wanted:
            raise ValueError(f"cannot export as GPT-2: {field} is {value!r}, must be {wanted!r} ({why})")
    ruled = {field for field, _, _ in EXPORT_RULES} | {"activation", "tie_embeddings"}
    for field in sorted(AXES.keys() - ruled):  # every other axis builds something GPT-2 lacks unless at its default
        value, default = getattr(config, field), getattr(ModelConfig(), field)
        if value != default:
            raise ValueError(f"cannot export as GPT-2: {field} is {value!r}, must be {default!r} (GPT-2 has none)")
    if config.activation not in ACTIVATIONS_TO_HF:
        raise ValueError(f"cannot export as GPT-2: activation is {config.activation!r}, must be one of "
                         f"{', '.join(ACTIVATIONS_TO_HF)} (GPT-2's MLP is up, activation, down; no gate)")


# The checks every HF family's config reader shares (gpt2 here, encoders, marian, llama), each failing with
# one line that names the config.json key and the rule.
def with_defaults(hf: dict[str, Any], defaults: dict[str, Any], drop_none: bool = False) -> dict[str, Any]:
    """The keys we read: the file's value, else the Config class's default (`drop_none`: a null reads as absent,
    for families whose Config classes treat it so)."""
    return {**defaults, **{k: v for k, v in hf.items() if k in defaults and not (drop_none and v is None)}}


def positive_ints(get: dict[str, Any], keys: tuple[str, ...]) -> dict[str, int]:
    return {k: _positive_int(k, get[k]) for k in keys}


def check_divisible(sizes: dict[str, int], field: str, by: str) -> None:
    if sizes[field] % sizes[by]:
        raise ValueError(f"config.json: {field} ({sizes[field]}) must be divisible by {by} ({sizes[by]})")


def hf_activation(field: str, name: Any, table: dict[str, str] = ACTIVATIONS_FROM_HF) -> str:
    """Our activation for an HF name in `table`."""
    if name not in table:
        raise ValueError(f"config.json: {field} {name!r} is not supported (supported: {', '.join(table)})")
    return table[name]


def _positive_int(field: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"config.json: {field} must be a positive integer, got {value!r}")
    return value


def _number(field: str, value: Any, low: float, high: float | None = None, low_open: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = ok and (value > low if low_open else value >= low) and (high is None or value < high)
    if not ok:
        bounds = f"{'>' if low_open else '>='} {low}" + (f" and < {high}" if high is not None else "")
        raise ValueError(f"config.json: {field} must be a number {bounds}, got {value!r}")
    return float(value)


def _bool(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"config.json: {field} must be true or false, got {value!r}")
    return value
