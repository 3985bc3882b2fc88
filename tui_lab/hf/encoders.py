"""BERT (BertForMaskedLM) and ViT (ViTForImageClassification): config.json -> our ModelConfig, and weight slots.

Both are encoder-only stacks of our design space. BERT (Devlin et al. 2019) is post-LN with learned
positions, token-type embeddings, a LayerNorm on the embeddings and the masked-LM head (dense, GELU,
LayerNorm, then the tied decoder with its own bias). ViT (Dosovitskiy et al. 2021) is pre-LN with a final
norm, a Conv2d patch embedding, a class token and a linear classifier on it. Names are those
`save_pretrained` writes and the Hub holds (transformers 5 renames ViT's modules in memory but saves
the old names). No torch here.
"""

from __future__ import annotations

from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.hf.config import (
    _bool,
    _number,
    _positive_int,
    check_divisible,
    hf_activation,
    positive_ints,
    with_defaults,
)
from tui_lab.hf.slots import Slot, linear, norm

# Each Config class's defaults for the keys we read, so a sparse config.json means what transformers reads.
_COMMON = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
           "hidden_act": "gelu", "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1}
BERT_DEFAULTS = {**_COMMON, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2,
                 "position_embedding_type": "absolute", "is_decoder": False, "add_cross_attention": False,
                 "tie_word_embeddings": True}
VIT_DEFAULTS = {**_COMMON, "hidden_dropout_prob": 0.0, "image_size": 224, "patch_size": 16, "num_channels": 3,
                "qkv_bias": True}
# The heads we have: a checkpoint of another head (BertModel, BertForSequenceClassification, ViTModel...)
# would load without the weights that give its outputs meaning, so it is refused by name instead.
HEADS = {"bert": ("BertForMaskedLM", "BertForPreTraining"), "vit": ("ViTForImageClassification",)}


def _check_head(hf: dict[str, Any]) -> None:
    kind, arch = hf["model_type"], hf.get("architectures")
    if isinstance(arch, list) and arch and not set(arch) & set(HEADS[kind]):
        raise ValueError(f"config.json: architectures is {arch}; the lab opens {kind} checkpoints with their "
                         f"head ({' or '.join(HEADS[kind])})")


def _stack(get: dict[str, Any]) -> dict[str, Any]:
    """The fields BERT and ViT share: sizes, activation, norm eps, dropout."""
    size = positive_ints(get, ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"))
    check_divisible(size, "hidden_size", "num_attention_heads")
    activation = hf_activation("hidden_act", get["hidden_act"])
    return dict(family="encoder-only", encoder_layers=size["num_hidden_layers"], decoder_layers=0,
                d_model=size["hidden_size"], heads=size["num_attention_heads"], d_ff=size["intermediate_size"],
                norm="layernorm", norm_eps=_number("layer_norm_eps", get["layer_norm_eps"], low=0.0, low_open=True),
                positions="learned", activation=activation, embedding_scale="none",
                bias=True, dropout=_number("hidden_dropout_prob", get["hidden_dropout_prob"], low=0.0, high=1.0))


def bert_config(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for a BERT config.json, or a one-line ValueError naming the HF key."""
    _check_head(hf)
    get = with_defaults(hf, BERT_DEFAULTS, drop_none=True)
    if get["position_embedding_type"] != "absolute":
        raise ValueError(f"config.json: position_embedding_type {get['position_embedding_type']!r} is not "
                         "supported (absolute only)")
    for key in ("is_decoder", "add_cross_attention"):
        if _bool(key, get[key]):
            raise ValueError(f"config.json: {key} is true; BERT here is an encoder only")
    types = get["type_vocab_size"]
    if not isinstance(types, int) or isinstance(types, bool) or types < 0:
        raise ValueError(f"config.json: type_vocab_size must be an integer >= 0, got {types!r}")
    return ModelConfig(
        name=name, **_stack(get), vocab=_positive_int("vocab_size", get["vocab_size"]),
        max_len=_positive_int("max_position_embeddings", get["max_position_embeddings"]), norm_position="post",
        final_norm=False, tie_embeddings=_bool("tie_word_embeddings", get["tie_word_embeddings"]), head="mlm",
        token_types=types, embedding_norm=True, output_bias=True, source=f"Hugging Face {name} (BERT)")


def vit_config(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for a ViT config.json, or a one-line ValueError naming the HF key."""
    _check_head(hf)
    get = with_defaults(hf, VIT_DEFAULTS, drop_none=True)
    if not _bool("qkv_bias", get["qkv_bias"]):
        raise ValueError("config.json: qkv_bias is false; our ViT has biases on q, k and v like every other Linear")
    patches = positive_ints(get, ("image_size", "patch_size"))
    check_divisible(patches, "image_size", "patch_size")
    image, patch = patches["image_size"], patches["patch_size"]
    return ModelConfig(
        name=name, **_stack(get), vocab=0, max_len=(image // patch) ** 2 + 1, norm_position="pre",
        final_norm=True, tie_embeddings=False, input="patches", image_size=image, patch_size=patch,
        channels=_positive_int("num_channels", get["num_channels"]), head="classifier", classes=_classes(hf),
        source=f"Hugging Face {name} (ViT)")


def _classes(hf: dict[str, Any]) -> int:
    """transformers saves id2label, not num_labels; either says how many classes (2 when neither does)."""
    labels = hf.get("id2label")
    count = len(labels) if isinstance(labels, dict) and labels else hf.get("num_labels", 2)
    count = _positive_int("id2label (number of labels)", count)
    if count < 2:
        raise ValueError(f"config.json: id2label has {count} label; the classifier needs at least 2")
    return count


def _ln(hf: str, ours: str, e: int) -> dict[str, Slot]:
    """A LayerNorm; old TF-converted BERT checkpoints name its tensors gamma and beta (transformers renames them)."""
    return {f"{hf}.weight": Slot(f"{ours}.weight", (e,), aliases=(f"{hf}.gamma",)),
            f"{hf}.bias": Slot(f"{ours}.bias", (e,), aliases=(f"{hf}.beta",))}


def _layer(h: str, o: str, c: ModelConfig, attention: str, out: str) -> dict[str, Slot]:
    """q, k, v (stacked in that order into our fused rows), the attention output, the FFN."""
    e, f = c.d_model, c.d_ff
    slots: dict[str, Slot] = {}
    for proj in ("query", "key", "value"):
        slots |= linear(f"{h}{attention}.{proj}", o + "attn.qkv", e, e, True)
    return (slots | linear(f"{h}{out}.dense", o + "attn.out", e, e, True)
            | linear(h + "intermediate.dense", o + "ffn.up", f, e, True)
            | linear(h + "output.dense", o + "ffn.down", e, f, True))


def bert_slots(c: ModelConfig) -> dict[str, Slot]:
    e, v = c.d_model, c.vocab
    emb = "bert.embeddings."
    word = emb + "word_embeddings.weight"
    out = {word: Slot("tok_embed.weight", (v, e)),
           emb + "position_embeddings.weight": Slot("pos_embed.weight", (c.max_len, e)),
           emb + "token_type_embeddings.weight": Slot("type_embed.weight", (c.token_types, e))}
    if not c.token_types:
        del out[emb + "token_type_embeddings.weight"]
    out |= _ln(emb + "LayerNorm", "embed_norm", e)
    for i in range(c.encoder_layers):
        h, o = f"bert.encoder.layer.{i}.", f"encoder.{i}."
        out |= _layer(h, o, c, "attention.self", "attention.output")
        out |= _ln(h + "attention.output.LayerNorm", o + "attn_norm", e)
        out |= _ln(h + "output.LayerNorm", o + "ffn_norm", e)
    head = "cls.predictions."
    out |= linear(head + "transform.dense", "head.dense", e, e, True)
    out |= _ln(head + "transform.LayerNorm", "head.norm", e)
    # The decoder's bias is what its forward adds; tied checkpoints store it once, as cls.predictions.bias
    # (transformers 5 unties the two when the decoder weight is untied).
    out[head + "decoder.bias"] = Slot("lm_head.bias", (v,), aliases=(head + "bias",))
    if c.tie_embeddings:  # the decoder is the word table; a stored copy is read only when the table is absent
        out[word] = Slot("tok_embed.weight", (v, e), aliases=(head + "decoder.weight",))
    else:
        out[head + "decoder.weight"] = Slot("lm_head.weight", (v, e))
    return out


def vit_slots(c: ModelConfig) -> dict[str, Slot]:
    e, p = c.d_model, c.patch_size
    emb = "vit.embeddings."
    out = {emb + "cls_token": Slot("patch_embed.cls_token", (1, 1, e)),
           emb + "position_embeddings": Slot("pos_embed.weight", (1, c.max_len, e), flatten=True),
           emb + "patch_embeddings.projection.weight": Slot("patch_embed.proj.weight", (e, c.channels, p, p)),
           emb + "patch_embeddings.projection.bias": Slot("patch_embed.proj.bias", (e,))}
    for i in range(c.encoder_layers):
        h, o = f"vit.encoder.layer.{i}.", f"encoder.{i}."
        out |= _layer(h, o, c, "attention.attention", "attention.output")
        out |= norm(h + "layernorm_before", o + "attn_norm", e) | norm(h + "layernorm_after", o + "ffn_norm", e)
    return out | norm("vit.layernorm", "encoder_norm", e) | linear("classifier", "head.out", c.classes, e, True)
