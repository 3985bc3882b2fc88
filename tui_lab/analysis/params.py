"""Exact parameter counts from the config alone, component by component.

Each formula mirrors a module of `tui_lab.model` (tests check them against `sum(p.numel())` for
every variant combination). Seed 003's table: Embedding V*E, attention 4E^2 + 4E whatever the
number of heads, LayerNorm 2E, FFN 2*E*F + F + E.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.cross_attention import guided_cross_params
from tui_lab.config import GATED, ModelConfig


def linear(n_in: int, n_out: int, bias: bool) -> int:
    return n_in * n_out + (n_out if bias else 0)


def norm_params(c: ModelConfig) -> int:
    # RMSNorm has a scale only; LayerNorm a scale and (with bias) a shift.
    # batchnorm: weight and bias like LayerNorm's; its running mean and variance are buffers, not parameters
    return c.d_model * (2 if c.norm in ("layernorm", "batchnorm") and c.bias else 1)


def kv_dim(c: ModelConfig) -> int:
    """Width of the k (and of the v) projection: kv_heads x d_head, E itself for multi-head attention."""
    return c.n_kv_heads * c.d_head


def qkv_has_bias(c: ModelConfig) -> bool:
    return c.bias or c.qkv_bias  # Qwen2: biases on q/k/v only, none on the output projection


def attention_params(c: ModelConfig) -> int:
    """q and output projections E x E, k and v E x (kv_heads x d_head): 4E^2 + 4E for multi-head with biases.

    Self-attention fuses q/k/v in one Linear, cross-attention splits q from k/v: the same count either way."""
    qkv = linear(c.d_model, c.d_model + 2 * kv_dim(c), qkv_has_bias(c))
    return qkv + linear(c.d_model, c.d_model, c.bias)


def expert_params(c: ModelConfig) -> int:
    """One dense FFN (a dense model's whole FFN, or one expert of a sparse one)."""
    matrices = 3 if c.activation in GATED else 2
    up = linear(c.d_model, c.d_ff, c.bias)
    return (matrices - 1) * up + linear(c.d_ff, c.d_model, c.bias)


def router_params(c: ModelConfig) -> int:
    return c.d_model * c.experts if c.ffn == "moe" else 0  # Linear E -> X without bias, as Mixtral's gate


def ffn_params(c: ModelConfig) -> int:
    """A layer's FFN: the dense one, or the router plus every expert."""
    if c.ffn == "none":
        return 0
    return expert_params(c) if c.ffn == "dense" else router_params(c) + c.experts * expert_params(c)


def active_ffn_params(c: ModelConfig) -> int:
    """The FFN parameters one token goes through: the router and experts_per_token of the experts."""
    if c.ffn == "none":
        return 0
    return expert_params(c) if c.ffn == "dense" else router_params(c) + c.experts_per_token * expert_params(c)


def ffn_norms(c: ModelConfig) -> int:
    """The FFN's own norm per block: one, or none in an attention-only block (ffn 'none')."""
    return 0 if c.ffn == "none" else 1


def position_params(c: ModelConfig) -> int:
    """Learned: one row per position. Relative (Shaw): a key and a value table (2k+1, D) in every self-attention
    layer. T5: a (buckets, H) table in each stack's first layer, shared by the rest of that stack."""
    stacks = int(c.encoder_layers > 0) + int(c.decoder_layers > 0)
    return {"learned": c.max_len * c.d_model,
            "relative": c.layers * 2 * (2 * c.relative_clip + 1) * c.d_head,
            "t5": stacks * c.relative_buckets * c.heads}.get(c.positions, 0)


def copy_params(c: ModelConfig) -> int:
    """The copy mechanism's gate p_gen: w . [context; state; input] + b, so 3E weights and one bias."""
    return 3 * c.d_model + 1 if c.copy else 0


def linformer_params(c: ModelConfig) -> int:
    """Linformer's E and F (max_len x linformer_k each, no bias) per encoder layer: shared by the heads, one for
    keys and values ('key-value'), or a pair per kv head ('none'). Performer's random features are a buffer."""
    if c.self_attention != "linformer":
        return 0
    pairs = c.n_kv_heads if c.linformer_sharing == "none" else 1
    return pairs * (1 if c.linformer_sharing == "key-value" else 2) * c.max_len * c.linformer_rows


def encoder_layer_params(c: ModelConfig) -> int:
    return attention_params(c) + linformer_params(c) + ffn_params(c) + (1 + ffn_norms(c)) * norm_params(c)


def decoder_layer_params(c: ModelConfig) -> int:
    """A decoder block adds cross-attention and its norm; GPT-2's decoder-only block does not."""
    if c.family == "decoder-only":
        return encoder_layer_params(c)
    return 2 * attention_params(c) + guided_cross_params(c) + ffn_params(c) + (2 + ffn_norms(c)) * norm_params(c)


def length_classifier_params(c: ModelConfig) -> int:
    """NAT's length classifier (model/nat.py): one Linear from d_model to max_len length classes."""
    return linear(c.d_model, c.max_len, c.bias) if c.decoder_mode == "nat-length-classifier" else 0


@dataclass(frozen=True)
class ParamCount:
    token_embedding: int
    position_embedding: int
    attention: int
    ffn: int
    norms: int
    output: int
    encoder_layer: int
    decoder_layer: int
    encoder_total: int
    decoder_total: int
    length_classifier: int = 0  # NAT's (decoder_mode nat-length-classifier); 0 otherwise
    idle_experts: int = 0  # the experts a token does not go through, over all layers (0 for a dense FFN)
    input_embedding: int = 0  # BERT's token types; ViT's patch projection and class token
    head: int = 0  # BERT's MLM transform, or the classifier
    copy: int = 0  # the copy mechanism's gate (tui_lab.model.copy)

    @property
    def embeddings(self) -> int:
        return self.token_embedding + self.position_embedding + self.input_embedding

    @property
    def total(self) -> int:
        return (self.embeddings + self.attention + self.ffn + self.norms + self.output + self.head
                + self.length_classifier + self.copy)

    @property
    def active(self) -> int:
        """Parameters one token goes through (Mixtral's "active parameters"): all but the unchosen experts."""
        return self.total - self.idle_experts

    @property
    def non_embedding(self) -> int:
        """What nanoGPT prints: everything but the position table (and the tied token table)."""
        return self.total - self.position_embedding

    def components(self) -> dict[str, int]:
        parts = {"embeddings": self.embeddings, "attention": self.attention, "ffn": self.ffn,
                 "norms": self.norms, "output": self.output}
        parts |= {"head": self.head} if self.head else {}
        parts |= ({"length classifier": self.length_classifier} if self.length_classifier else {})
        return parts | ({"copy": self.copy} if self.copy else {})  # only where the model has it

    def to_dict(self) -> dict[str, int]:
        return {"total_params": self.total, "active_params": self.active, "token_embedding": self.token_embedding,
                "position_embedding": self.position_embedding, **self.components(),
                "encoder_layer": self.encoder_layer, "decoder_layer": self.decoder_layer,
                "encoder_total": self.encoder_total, "decoder_total": self.decoder_total,
                "input_embedding": self.input_embedding, "head": self.head,
                "length_classifier": self.length_classifier}


def token_type_params(c: ModelConfig) -> int:
    return c.token_types * c.d_model


def patch_params(c: ModelConfig) -> int:
    """ViT's Conv2d (kernel = stride = patch, with bias) plus the class token."""
    if c.input != "patches":
        return 0
    return linear(c.channels * c.patch_size**2, c.d_model, True) + c.d_model


def mlm_transform_params(c: ModelConfig) -> int:
    return linear(c.d_model, c.d_model, c.bias) + norm_params(c) if c.head == "mlm" else 0


def classifier_params(c: ModelConfig) -> int:
    return linear(c.d_model, c.classes, True) if c.head == "classifier" else 0


def output_params(c: ModelConfig) -> int:
    """The projection over the vocabulary (none for a classifier); tied, only its bias is its own."""
    if c.head == "classifier":
        return 0
    return (0 if c.tie_embeddings else c.vocab * c.d_model) + (c.vocab if c.output_bias else 0)


def count_params(c: ModelConfig) -> ParamCount:
    n_enc, n_dec = c.encoder_layers, c.decoder_layers
    attn_blocks = n_enc + n_dec * (2 if c.family == "encoder-decoder" else 1)
    layer_norms = (1 + ffn_norms(c)) * n_enc + n_dec * (2 if c.family == "encoder-decoder" else 1) \
        + n_dec * ffn_norms(c)
    final_norms = (int(c.has_encoder) + int(c.family != "encoder-only")) if c.final_norm else 0
    return ParamCount(
        token_embedding=c.vocab * c.d_model if c.input == "tokens" else 0,
        position_embedding=position_params(c),
        attention=attn_blocks * attention_params(c) + n_enc * linformer_params(c) + n_dec * guided_cross_params(c),
        ffn=(n_enc + n_dec) * ffn_params(c),
        norms=(layer_norms + final_norms + int(c.embedding_norm)) * norm_params(c),
        output=output_params(c),
        encoder_layer=encoder_layer_params(c) if n_enc else 0,
        decoder_layer=decoder_layer_params(c) if n_dec else 0,
        encoder_total=n_enc * encoder_layer_params(c),
        decoder_total=n_dec * decoder_layer_params(c),
        length_classifier=length_classifier_params(c),
        idle_experts=(n_enc + n_dec) * (ffn_params(c) - active_ffn_params(c)),
        input_embedding=token_type_params(c) + patch_params(c),
        head=mlm_transform_params(c) + classifier_params(c),
        copy=copy_params(c),
    )
