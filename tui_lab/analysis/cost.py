"""Forward FLOPs per token and memory estimates, from the config alone.

FLOPs count a multiply-add as 2 (Kaplan et al. 2020, table 1): 2 x (matmul weights) per token, plus
the attention scores and weighted sum, 2 x 2 x L x E per attention layer at context L.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.params import attention_params, count_params, ffn_params
from tui_lab.config import ModelConfig

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def flops_per_token(c: ModelConfig, context: int) -> int:
    """Forward FLOPs for one token (decoder-side token for encoder-decoders, with S = T = context)."""
    attn_layers = c.encoder_layers + c.decoder_layers * (2 if c.family == "encoder-decoder" else 1)
    matmul = attn_layers * attention_params(c) + c.layers * ffn_params(c) + c.vocab * c.d_model
    scores = attn_layers * 2 * context * c.d_model
    return 2 * matmul + 2 * scores


def training_flops_per_token(c: ModelConfig, context: int) -> int:
    """Forward plus backward: the backward pass costs about twice the forward."""
    return 3 * flops_per_token(c, context)


@dataclass(frozen=True)
class Memory:
    weights: int
    training: int  # weights + gradients + AdamW's two moments
    activations: int  # saved for backward, one batch
    kv_cache_per_token: int
    kv_cache_full: int  # for max_len tokens, one sequence

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def memory(c: ModelConfig, batch: int = 1, seq_len: int = 128, dtype: str = "float32") -> Memory:
    b = DTYPE_BYTES[dtype]
    params = count_params(c).total
    kv_token = 2 * c.decoder_layers * c.heads * c.d_head * b
    return Memory(
        weights=params * b,
        training=params * (b + b + 8),  # fp32 moments, as torch's AdamW keeps them in the param dtype
        activations=activation_bytes(c, batch, seq_len, b),
        kv_cache_per_token=kv_token,
        kv_cache_full=kv_token * c.max_len,
    )


def activation_bytes(c: ModelConfig, batch: int, seq_len: int, b: int) -> int:
    """Tensors autograd keeps per layer (Korthikanti et al. 2022, without the dropout masks' savings)."""
    e, f, h, tokens = c.d_model, c.d_ff, c.heads, batch * seq_len
    per_layer = tokens * (10 * e + 2 * f) + batch * h * seq_len * seq_len * 2
    cross = (tokens * 4 * e + batch * h * seq_len * seq_len * 2) if c.family == "encoder-decoder" else 0
    logits = tokens * c.vocab * 2
    return b * (c.layers * per_layer + c.decoder_layers * cross + logits)
