"""T5 (Raffel et al. 2020) and its v1.1 / FLAN shape: config.json -> our ModelConfig, and weight slots.

T5 is an encoder-decoder with pre-norm RMSNorm blocks (T5LayerNorm: a scale, no mean, no bias), no biases
anywhere, unscaled dot products (the 1/sqrt(d) is folded into the init: our attention_scale 'none'), a final
norm on each stack, one embedding shared by the encoder and the decoder, and positions as a per-head bias
over log-spaced distance buckets, stored in each stack's first layer (our positions 't5', model/relative.py).
- original T5: ReLU FFN (wi, wo), the output layer tied to the embedding and the decoder's output rescaled by
  d_model^-0.5 (our output_scale 'inv_sqrt_d_model');
- v1.1 / FLAN: "gated-gelu" (our geglu: wi_0 the gate, wi_1 the up branch), an `lm_head` of its own, no rescale.
transformers 5.24's T5Config always ties and keeps the rescale apart as `scale_decoder_outputs`: the file's
`scale_decoder_outputs` when it has one (what 5.24 writes, beside `tie_word_embeddings: true`), else whether the
file's `tie_word_embeddings` is not false (a 4.x folder). The head is then the embedding unless the weights store
an `lm_head.weight` that differs from it (FLAN, whatever version saved it): `weights.untie_stored_head`, as
5.24's `tie_weights` keeps both.
A head size (`d_kv`) other than d_model / num_heads (FLAN-T5-small: 6 x 64 with d_model 512) is refused in
one line: our attention's width is d_model. No torch here.
"""

from __future__ import annotations

from typing import Any

from tui_lab.config import GATED, ModelConfig
from tui_lab.hf.config import _bool, _number, hf_activation, positive_ints, with_defaults
from tui_lab.hf.slots import Slot, linear

# T5Config's defaults for the keys we read (transformers 5.24).
DEFAULTS: dict[str, Any] = {
    "vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_decoder_layers": None,
    "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
    "dropout_rate": 0.1, "layer_norm_epsilon": 1e-6, "feed_forward_proj": "relu", "tie_word_embeddings": True,
    "n_positions": 512,
}
# feed_forward_proj -> our activation: a plain one, or "gated-ACT" for the gated FFN ("gated-gelu" is gelu_new,
# the tanh GELU, in T5Config). gelu_new, gelu_pytorch_tanh and gelu_fast are the tanh GELU; swish is silu.
FFN = {"relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
       "gelu_fast": "gelu_tanh", "silu": "silu", "swish": "silu", "gated-gelu": "geglu", "gated-gelu_new": "geglu",
       "gated-gelu_pytorch_tanh": "geglu", "gated-gelu_fast": "geglu", "gated-silu": "swiglu",
       "gated-swish": "swiglu", "gated-relu": "reglu"}


def config_from_hf(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for a T5 config.json, or a one-line ValueError naming the HF key."""
    get = with_defaults(hf, DEFAULTS)
    if get["num_decoder_layers"] is None:
        get["num_decoder_layers"] = get["num_layers"]
    size = positive_ints(get, ("vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_decoder_layers",
                               "num_heads", "relative_attention_num_buckets", "relative_attention_max_distance",
                               "n_positions"))
    if size["num_heads"] * size["d_kv"] != size["d_model"]:
        raise ValueError(f"config.json: num_heads x d_kv ({size['num_heads']} x {size['d_kv']} = "
                         f"{size['num_heads'] * size['d_kv']}) must equal d_model ({size['d_model']}); "
                         "the lab's attention is d_model wide (FLAN-T5-small's 6 x 64 with 512 is not opened)")
    activation = hf_activation("feed_forward_proj", get["feed_forward_proj"], FFN)
    return ModelConfig(
        name=name, family="encoder-decoder", encoder_layers=size["num_layers"],
        decoder_layers=size["num_decoder_layers"], d_model=size["d_model"], heads=size["num_heads"],
        d_ff=size["d_ff"], vocab=size["vocab_size"], max_len=size["n_positions"], norm="rmsnorm",
        norm_position="pre", norm_eps=_number("layer_norm_epsilon", get["layer_norm_epsilon"], low=0.0),
        positions="t5", relative_buckets=size["relative_attention_num_buckets"],
        relative_max_distance=size["relative_attention_max_distance"], activation=activation,
        embedding_scale="none", tie_embeddings=True, bias=False, final_norm=True, attention_scale="none",
        output_scale="inv_sqrt_d_model" if scales_decoder_outputs(hf) else "none",
        dropout=_number("dropout_rate", get["dropout_rate"], low=0.0, high=1.0), source=f"Hugging Face {name} (T5)",
    )


def scales_decoder_outputs(hf: dict[str, Any]) -> bool:
    """T5Config's rule (5.24): `scale_decoder_outputs` if the file says, else `tie_word_embeddings is not False`."""
    if "scale_decoder_outputs" in hf:
        return _bool("scale_decoder_outputs", hf["scale_decoder_outputs"])
    tie = hf.get("tie_word_embeddings")
    if tie is not None:
        _bool("tie_word_embeddings", tie)
    return tie is not False


def slots(c: ModelConfig) -> dict[str, Slot]:
    """HF tensor name -> Slot for every tensor a T5ForConditionalGeneration of config `c` has."""
    e, v = c.d_model, c.vocab
    embed = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
    out = {"shared.weight": Slot("tok_embed.weight", (v, e), aliases=embed)}
    for stack, layers in (("encoder", c.encoder_layers), ("decoder", c.decoder_layers)):
        for i in range(layers):
            h, o = f"{stack}.block.{i}.layer.", f"{stack}.{i}."
            out |= _attention(c, h + "0.SelfAttention", o + "attn", ("qkv", "qkv", "qkv"))
            out |= _norm(h + "0.layer_norm", o + "attn_norm", e)
            if i == 0:  # the bucket table lives in the first layer and serves the stack (model/relative.py)
                out[h + "0.SelfAttention.relative_attention_bias.weight"] = Slot(
                    o + "attn.t5_bias.table.weight", (c.relative_buckets, c.heads))
            ffn = 1
            if stack == "decoder":
                out |= _attention(c, h + "1.EncDecAttention", o + "cross", ("q", "kv", "kv"))
                out |= _norm(h + "1.layer_norm", o + "cross_norm", e)
                ffn = 2
            out |= _ffn(c, f"{h}{ffn}.", o)
        out |= _norm(f"{stack}.final_layer_norm", f"{stack}_norm", e)
    if not c.tie_embeddings:
        out["lm_head.weight"] = Slot("lm_head.weight", (v, e))
    return out


def _norm(hf: str, ours: str, e: int) -> dict[str, Slot]:
    return {f"{hf}.weight": Slot(f"{ours}.weight", (e,))}


def _attention(c: ModelConfig, hf: str, ours: str, parts: tuple[str, str, str]) -> dict[str, Slot]:
    """q, k, v (stacked in that order into our fused rows) and o, none with a bias."""
    e, out = c.d_model, {}
    for proj, part in zip("qkv", parts, strict=True):
        out |= linear(f"{hf}.{proj}", f"{ours}.{part}", e, e, False)
    return out | linear(f"{hf}.o", f"{ours}.out", e, e, False)


def _ffn(c: ModelConfig, h: str, o: str) -> dict[str, Slot]:
    """wi (or the gate wi_0 and the up branch wi_1) and wo, then the FFN's norm."""
    e, f, dense = c.d_model, c.d_ff, h + "DenseReluDense."
    ups = {"wi_0": "gate", "wi_1": "up"} if c.activation in GATED else {"wi": "up"}
    out: dict[str, Slot] = {}
    for name, ours in ups.items():
        out |= linear(dense + name, f"{o}ffn.{ours}", f, e, False)
    return out | linear(dense + "wo", o + "ffn.down", e, f, False) | _norm(h + "layer_norm", o + "ffn_norm", e)
