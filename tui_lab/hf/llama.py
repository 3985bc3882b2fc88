"""Llama and its relatives (Mistral, Qwen2, Mixtral): config.json -> our ModelConfig, and weight slots.

All four are one point of our design space: decoder-only, pre-norm RMSNorm with a final norm, RoPE,
SwiGLU, no biases (Qwen2: biases on q, k, v only), grouped-query attention where `num_key_value_heads`
< heads, Mistral's sliding window, Mixtral's experts. HF rotates q/k by halves (`rotate_half`: element
j pairs with j + D/2); ours rotates adjacent pairs (2i, 2i+1), so q and k rows are reordered on load
(`Slot.rope_heads`), which leaves every score q.k unchanged. No torch here.
"""

from __future__ import annotations

from typing import Any

from tui_lab.config import ModelConfig, field_names
from tui_lab.hf.config import _bool, _number, _positive_int, check_divisible, positive_ints, with_defaults
from tui_lab.hf.slots import Slot, linear, norm

# Each model type's defaults for the keys we read (its transformers Config class), so a sparse
# config.json means what transformers thinks it means.
_COMMON = {"hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "head_dim": None,
           "attention_bias": False, "mlp_bias": False, "rope_theta": 10000.0, "rope_scaling": None}
DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": None,
              "max_position_embeddings": 2048},
    "mistral": {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 4096 * 32, "sliding_window": 4096},
    "qwen2": {**_COMMON, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
              "max_position_embeddings": 32768, "use_sliding_window": False, "sliding_window": 4096,
              "max_window_layers": 28, "layer_types": None},
    "mixtral": {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 4096 * 32, "rms_norm_eps": 1e-5, "rope_theta": 1e6,
                "sliding_window": None, "num_local_experts": 8, "num_experts_per_tok": 2},
}
LABELS = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "mixtral": "Mixtral"}


def config_from_hf(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for a llama/mistral/qwen2/mixtral config.json, or one line naming the HF key."""
    kind = hf["model_type"]
    get = with_defaults(hf, DEFAULTS[kind])
    size = positive_ints(get, ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                               "num_attention_heads", "max_position_embeddings"))
    check_divisible(size, "hidden_size", "num_attention_heads")
    e, heads = size["hidden_size"], size["num_attention_heads"]
    if get["head_dim"] not in (None, e // heads):
        raise ValueError(f"config.json: head_dim ({get['head_dim']}) must be hidden_size / num_attention_heads "
                         f"({e // heads}); our attention has no separate head size")
    if get["hidden_act"] not in ("silu", "swish"):
        raise ValueError(f"config.json: hidden_act {get['hidden_act']!r} is not supported (only silu: SwiGLU)")
    for key in ("attention_bias", "mlp_bias"):
        if _bool(key, get[key]):
            raise ValueError(f"config.json: {key} is true; {LABELS[kind]} models here have no such biases")
    kv = get["num_key_value_heads"]
    kv = heads if kv is None else _positive_int("num_key_value_heads", kv)
    if heads % kv:
        raise ValueError(f"config.json: num_attention_heads ({heads}) must be a multiple of "
                         f"num_key_value_heads ({kv})")
    axes = {"kv_heads": (0 if kv == heads else kv, 0, "num_key_value_heads"),
            "qkv_bias": (kind == "qwen2", False, "model_type qwen2 (biases on q, k, v)"),
            "attention_window": (_window(kind, get), 0, "sliding_window")}
    axes |= _experts(kind, get)
    return ModelConfig(
        name=name, family="decoder-only", encoder_layers=0, decoder_layers=size["num_hidden_layers"],
        d_model=e, heads=heads, d_ff=size["intermediate_size"], vocab=size["vocab_size"],
        max_len=size["max_position_embeddings"], norm="rmsnorm", norm_position="pre",
        norm_eps=_number("rms_norm_eps", get["rms_norm_eps"], low=0.0, low_open=True), positions="rope",
        activation="swiglu", embedding_scale="none",
        tie_embeddings=_bool("tie_word_embeddings", get["tie_word_embeddings"]), bias=False, final_norm=True,
        dropout=0.0, source=f"Hugging Face {name} ({LABELS[kind]})", rope_base=_rope_base(hf, get),
        **axis_fields(axes),
    )


def axis_fields(axes: dict[str, tuple[Any, Any, str]]) -> dict[str, Any]:
    """field -> value for the axes this build has; a needed axis this build lacks is refused by name."""
    known = set(field_names())
    out = {}
    for field, (value, default, hf_key) in axes.items():
        if field in known:
            out[field] = value
        elif value != default:
            raise ValueError(f"config.json: {hf_key} needs the config axis {field} ({field}={value!r}), "
                             "which this build of the lab lacks")
    return out


def _window(kind: str, get: dict[str, Any]) -> int:
    if kind == "qwen2":
        return _qwen2_window(get)
    window = get.get("sliding_window")
    return 0 if window is None else _positive_int("sliding_window", window)


def _qwen2_window(get: dict[str, Any]) -> int:
    """Qwen2 windows layer i when use_sliding_window is true and i >= max_window_layers (transformers' layer_types,
    which config.json may also spell out). Ours is one window for every layer: that, or none, is what we open."""
    if not _bool("use_sliding_window", get["use_sliding_window"]):
        return 0  # transformers then sets sliding_window to None whatever layer_types says
    window = get["sliding_window"]
    if window is None:
        return 0
    window = _positive_int("sliding_window", window)
    layers = _positive_int("num_hidden_layers", get["num_hidden_layers"])
    kinds = get["layer_types"]
    if kinds is None:
        first = _nonnegative_int("max_window_layers", get["max_window_layers"])
        kinds = ["sliding_attention" if i >= first else "full_attention" for i in range(layers)]
    if not isinstance(kinds, list) or len(kinds) != layers:
        raise ValueError(f"config.json: layer_types must list one kind per layer ({layers}), got {kinds!r}")
    windowed = [i for i, k in enumerate(kinds) if k == "sliding_attention"]
    if not windowed:
        return 0
    if len(windowed) < layers:
        raise ValueError(f"config.json: use_sliding_window is true and only layers {windowed[0]}..{windowed[-1]} of "
                         f"{layers} have the window (layers from max_window_layers on); the lab's window applies to "
                         "every layer or none")
    return window


def _nonnegative_int(key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"config.json: {key} must be an integer >= 0, got {value!r}")
    return value


def _experts(kind: str, get: dict[str, Any]) -> dict[str, tuple[Any, Any, str]]:
    if kind != "mixtral":
        return {}
    experts = _positive_int("num_local_experts", get["num_local_experts"])
    top = _positive_int("num_experts_per_tok", get["num_experts_per_tok"])
    return {"ffn": ("moe", "dense", "model_type mixtral (experts)"),
            "experts": (experts, 0, "num_local_experts"), "experts_per_token": (top, 0, "num_experts_per_tok")}


def _rope_base(hf: dict[str, Any], get: dict[str, Any]) -> float:
    """rope_theta from transformers 5's `rope_parameters` or 4.x's `rope_theta`; scaled RoPE is refused."""
    params = hf.get("rope_parameters")
    scaling = params if isinstance(params, dict) else get["rope_scaling"]
    if isinstance(scaling, dict) and scaling.get("rope_type", scaling.get("type", "default")) != "default":
        kind = scaling.get("rope_type", scaling.get("type"))
        raise ValueError(f"config.json: rope_scaling type {kind!r} is not supported (plain RoPE only)")
    if scaling is not None and not isinstance(scaling, dict):
        raise ValueError(f"config.json: rope_scaling must be an object or null, got {scaling!r}")
    theta = params.get("rope_theta", get["rope_theta"]) if isinstance(params, dict) else get["rope_theta"]
    return _number("rope_theta", theta, low=1.0, low_open=True)


def slots(c: ModelConfig) -> dict[str, Slot]:
    """HF tensor name -> Slot for every tensor a model of config `c` has."""
    e, d = c.d_model, c.d_head
    kv = getattr(c, "kv_heads", 0) or c.heads
    qkv_bias = bool(getattr(c, "qkv_bias", False))
    out = {"model.embed_tokens.weight": Slot("tok_embed.weight", (c.vocab, e))}
    for i in range(c.decoder_layers):
        h, o = f"model.layers.{i}.", f"decoder.{i}."
        out |= norm(h + "input_layernorm", o + "attn_norm", e, bias=False)
        out |= norm(h + "post_attention_layernorm", o + "ffn_norm", e, bias=False)
        out |= linear(h + "self_attn.q_proj", o + "attn.qkv", c.heads * d, e, qkv_bias, rope_heads=c.heads)
        out |= linear(h + "self_attn.k_proj", o + "attn.qkv", kv * d, e, qkv_bias, rope_heads=kv)
        out |= linear(h + "self_attn.v_proj", o + "attn.qkv", kv * d, e, qkv_bias)
        out |= linear(h + "self_attn.o_proj", o + "attn.out", e, e, False)
        out |= _ffn_slots(c, h, o)
    out |= norm("model.norm", "decoder_norm", e, bias=False)
    if not c.tie_embeddings:
        out["lm_head.weight"] = Slot("lm_head.weight", (c.vocab, e))
    return out


def _ffn_slots(c: ModelConfig, h: str, o: str) -> dict[str, Slot]:
    e, f = c.d_model, c.d_ff
    if getattr(c, "ffn", "dense") != "moe":
        return (linear(h + "mlp.gate_proj", o + "ffn.gate", f, e, False)
                | linear(h + "mlp.up_proj", o + "ffn.up", f, e, False)
                | linear(h + "mlp.down_proj", o + "ffn.down", e, f, False))
    from tui_lab.hf.moe_slots import mixtral_slots

    return mixtral_slots(c, h, o)
