"""Marian (Helsinki-NLP opus-mt): config.json -> our ModelConfig, and weight slots.

Marian is the 2017 base model almost exactly (encoder-decoder, post-LN, no final norms, biases
everywhere, one embedding shared by source, target and the output layer), with three differences:
swish (our `silu`) in the FFN, sinusoidal positions laid out as all sines then all cosines (our
`sinusoidal_halves`, never stored in the weights), and `final_logits_bias` added to the logits.
Position ids start at 0 (no padding offset, unlike BART). No torch here.
"""

from __future__ import annotations

from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.hf.config import (
    ACTIVATIONS_FROM_HF,
    _bool,
    _number,
    check_divisible,
    hf_activation,
    positive_ints,
    with_defaults,
)
from tui_lab.hf.slots import Slot, linear, norm

# MarianConfig's defaults for the keys we read.
DEFAULTS: dict[str, Any] = {
    "vocab_size": 58101, "decoder_vocab_size": None, "max_position_embeddings": 1024, "encoder_layers": 12,
    "encoder_ffn_dim": 4096, "encoder_attention_heads": 16, "decoder_layers": 12, "decoder_ffn_dim": 4096,
    "decoder_attention_heads": 16, "activation_function": "gelu", "d_model": 1024, "dropout": 0.1,
    "scale_embedding": False, "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True,
    "normalize_before": False, "add_final_layer_norm": False, "normalize_embedding": False,
    "static_position_embeddings": True,
}
ACTIVATIONS = {**ACTIVATIONS_FROM_HF, "swish": "silu", "silu": "silu"}
# Flags of the wider BART/fairseq family that Marian's code ignores or never sets; a config that
# asks for them was made for another model.
MUST_BE = {"normalize_before": False, "add_final_layer_norm": False, "normalize_embedding": False,
           "static_position_embeddings": True, "share_encoder_decoder_embeddings": True,
           "tie_word_embeddings": True}


def config_from_hf(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for a Marian config.json, or a one-line ValueError naming the HF key."""
    get = with_defaults(hf, DEFAULTS)
    for key, wanted in MUST_BE.items():
        if _bool(key, get[key]) != wanted:
            raise ValueError(f"config.json: {key} is {get[key]}; Marian here needs {wanted}")
    size = positive_ints(get, ("vocab_size", "max_position_embeddings", "d_model", "encoder_layers",
                               "decoder_layers", "encoder_ffn_dim", "decoder_ffn_dim", "encoder_attention_heads",
                               "decoder_attention_heads"))
    for enc, dec in (("encoder_ffn_dim", "decoder_ffn_dim"), ("encoder_attention_heads", "decoder_attention_heads")):
        if size[enc] != size[dec]:
            raise ValueError(f"config.json: {dec} ({size[dec]}) must equal {enc} ({size[enc]}); "
                             "our model has one d_ff and one head count")
    if get["decoder_vocab_size"] not in (None, size["vocab_size"]):
        raise ValueError(f"config.json: decoder_vocab_size ({get['decoder_vocab_size']}) must equal vocab_size "
                         f"({size['vocab_size']}); source and target share one embedding here")
    check_divisible(size, "d_model", "encoder_attention_heads")
    activation = hf_activation("activation_function", get["activation_function"], ACTIVATIONS)
    return ModelConfig(
        name=name, family="encoder-decoder", encoder_layers=size["encoder_layers"],
        decoder_layers=size["decoder_layers"], d_model=size["d_model"], heads=size["encoder_attention_heads"],
        d_ff=size["encoder_ffn_dim"], vocab=size["vocab_size"], max_len=size["max_position_embeddings"],
        norm="layernorm", norm_position="post", norm_eps=1e-5, positions="sinusoidal_halves",
        activation=activation,
        embedding_scale="sqrt_d_model" if _bool("scale_embedding", get["scale_embedding"]) else "none",
        tie_embeddings=True, bias=True, final_norm=False,
        dropout=_number("dropout", get["dropout"], low=0.0, high=1.0), source=f"Hugging Face {name} (Marian)",
        output_bias=True,  # final_logits_bias: a (1, V) buffer in HF, our lm_head.bias (V,)
    )


def slots(c: ModelConfig) -> dict[str, Slot]:
    """HF tensor name -> Slot for every tensor a Marian of config `c` has."""
    e, v = c.d_model, c.vocab
    embed = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    out = {"model.shared.weight": Slot("tok_embed.weight", (v, e), aliases=embed)}
    for i in range(c.encoder_layers):
        h, o = f"model.encoder.layers.{i}.", f"encoder.{i}."
        out |= _attention(h + "self_attn", o + "attn", e, ("qkv", "qkv", "qkv"))
        out |= norm(h + "self_attn_layer_norm", o + "attn_norm", e) | _ffn(c, h, o)
    for i in range(c.decoder_layers):
        h, o = f"model.decoder.layers.{i}.", f"decoder.{i}."
        out |= _attention(h + "self_attn", o + "attn", e, ("qkv", "qkv", "qkv"))
        out |= norm(h + "self_attn_layer_norm", o + "attn_norm", e)
        out |= _attention(h + "encoder_attn", o + "cross", e, ("q", "kv", "kv"))
        out |= norm(h + "encoder_attn_layer_norm", o + "cross_norm", e) | _ffn(c, h, o)
    out["final_logits_bias"] = Slot("lm_head.bias", (1, v), flatten=True)  # ours is (V,)
    if not c.tie_embeddings:  # a stored head that differs from the embedding (`weights.untie_stored_head`)
        out["lm_head.weight"] = Slot("lm_head.weight", (v, e))
    return out


def _attention(hf: str, ours: str, e: int, parts: tuple[str, str, str]) -> dict[str, Slot]:
    """q, k, v projections (in that order, so stacking gives our fused rows) and the output projection."""
    out: dict[str, Slot] = {}
    for proj, part in zip(("q_proj", "k_proj", "v_proj"), parts, strict=True):
        out |= linear(f"{hf}.{proj}", f"{ours}.{part}", e, e, True)
    return out | linear(f"{hf}.out_proj", f"{ours}.out", e, e, True)


def _ffn(c: ModelConfig, h: str, o: str) -> dict[str, Slot]:
    return (linear(h + "fc1", o + "ffn.up", c.d_ff, c.d_model, True)
            | linear(h + "fc2", o + "ffn.down", c.d_model, c.d_ff, True)
            | norm(h + "final_layer_norm", o + "ffn_norm", c.d_model))
