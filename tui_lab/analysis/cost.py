"""Forward FLOPs per token and memory estimates, from the config alone.

FLOPs count a multiply-add as 2 (Kaplan et al. 2020, table 1): 2 x (matmul weights) per token, plus
the attention scores and weighted sum, 2 x 2 x E per attended key per attention layer: L keys at context L
for full attention, fewer with a sliding window (`attention_pattern`). A mixture-of-experts FFN costs what a
token goes through (`active_ffn_params`: the router and experts_per_token experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.attention_pattern import attended_pairs, mean_keys, query_keys
from tui_lab.analysis.efficient import core_flops_per_token, is_approximate, performer_state_bytes, score_columns
from tui_lab.analysis.params import active_ffn_params, attention_params, count_params, kv_dim, linear, qkv_has_bias
from tui_lab.config import ModelConfig

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def flops_per_token(c: ModelConfig, context: int) -> int:
    """Forward FLOPs for one token (decoder-side token for encoder-decoders, with S = T = context)."""
    attn_layers = c.encoder_layers + c.decoder_layers * (2 if c.family == "encoder-decoder" else 1)
    matmul = attn_layers * attention_params(c) + c.layers * active_ffn_params(c) + c.vocab * c.d_model
    cross_layers = c.decoder_layers if c.family == "encoder-decoder" else 0
    # Per token: an encoder query's mean keys, the newest decoder query's keys (Kaplan's L for full causal).
    keys = (c.encoder_layers * round(mean_keys(context, False, c.attention_window, c.global_tokens))
            + c.decoder_layers * newest_keys(c, context) + cross_layers * context)
    if is_approximate(c):  # Linformer, Performer (analysis/efficient.py): self-attention's core stops growing as L^2
        return 2 * matmul + 4 * cross_layers * context * c.d_model + c.layers * core_flops_per_token(c, context)
    return 2 * matmul + 2 * 2 * keys * c.d_model


def newest_keys(c: ModelConfig, context: int) -> int:
    """Keys the newest token's causal query attends to at context L: L, or its window (and the globals)."""
    if context < 1:
        return 0
    return query_keys(context - 1, context, True, c.attention_window, c.global_tokens)


def _pairs(c: ModelConfig, length: int, causal: bool) -> int:
    return attended_pairs(length, causal, c.attention_window, c.global_tokens)


def training_flops_per_token(c: ModelConfig, context: int) -> int:
    """Forward plus backward: the backward pass costs about twice the forward."""
    return 3 * flops_per_token(c, context)


@dataclass(frozen=True)
class Memory:
    weights: int
    training: int  # weights + gradients + AdamW's two moments
    activations: int  # saved for backward, one batch
    kv_cache_per_token: int
    kv_cache_full: int  # for max_len tokens, one sequence (at most window + global tokens with a window)

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def memory(c: ModelConfig, batch: int = 1, seq_len: int = 128, dtype: str = "float32",
           source: int | None = None) -> Memory:
    """Bytes at `dtype` for a batch of `seq_len` tokens (an encoder-decoder's target; its source `source`,
    else as long as the target)."""
    b = DTYPE_BYTES[dtype]
    params = count_params(c).total
    kv_token = kv_bytes_per_token(c, dtype)
    return Memory(
        weights=params * b,
        training=params * (b + b + 8),  # fp32 moments, as torch's AdamW keeps them in the param dtype
        activations=activation_bytes(c, batch, seq_len, b, source),
        kv_cache_per_token=kv_token,
        kv_cache_full=kv_cache_bytes(c, c.max_len, dtype=dtype),
    )


def kv_bytes_per_token(c: ModelConfig, dtype: str = "float32") -> int:
    """K and V of one position in every decoder layer; grouped-query attention stores K heads, not H.
    Performer keeps running sums instead: nothing per position (`kv_cache_bytes` has their fixed size)."""
    if c.self_attention == "performer":
        return 0
    return 2 * c.decoder_layers * c.n_kv_heads * c.d_head * DTYPE_BYTES[dtype]


def kv_cache_tokens(c: ModelConfig, tokens: int) -> int:
    """Positions a layer's KV cache holds for a run of `tokens`: all of them, or with a sliding window
    (Mistral's rolling buffer, `model.kv_cache.WindowKV`) at most the window plus the global tokens."""
    return min(tokens, c.attention_window + c.global_tokens) if c.attention_window else tokens


def kv_cache_bytes(c: ModelConfig, tokens: int, batch: int = 1, dtype: str = "float32") -> int:
    """The KV cache `model.new_cache(batch, tokens)` allocates: bounded by the window for window layers,
    fixed for Performer (its running sums)."""
    if c.self_attention == "performer":
        return performer_state_bytes(c, batch, dtype)
    return kv_bytes_per_token(c, dtype) * batch * kv_cache_tokens(c, tokens)


def activation_bytes(c: ModelConfig, batch: int, seq_len: int, b: int, source: int | None = None) -> int:
    """Tensors autograd keeps per layer (Korthikanti et al. 2022, without the dropout masks' savings); an
    encoder-decoder's encoder layers at the source length (`source`, else `seq_len`), its decoder layers at the
    target's, and cross-attention's scores target x source."""
    e, f, h = c.d_model, c.d_ff * max(1, c.experts_per_token), c.heads  # k experts' hidden

    def layer(length: int) -> int:
        return batch * length * (10 * e + 2 * f) + batch * h * length * score_columns(c, length) * 2

    two = c.family == "encoder-decoder"
    s = source if two and source is not None else seq_len
    encoder = c.encoder_layers * layer(s)
    cross = (batch * seq_len * 4 * e + batch * h * seq_len * s * 2) if two else 0
    logits = batch * seq_len * c.vocab * 2
    return b * (encoder + c.decoder_layers * (layer(seq_len) + cross) + logits)


# --- Decoding one token, cached and uncached (seed 003) -------------------------------------------
# Uncached, each new token recomputes the whole prefix: its cost grows with the context L (the run's total
# ~L^2). Cached, each token pays the d_model^2 weight matmuls once plus attention over the L cached keys:
# linear in L with a slope of 4*E per layer, beside a d^2 part that does not move.


def token_weight_flops(c: ModelConfig) -> int:
    """FLOPs of one decoder-side token through every weight matrix: projections, FFN, cross-attention's
    query and output projections (its keys/values come from the source), and the head."""
    cross = linear(c.d_model, c.d_model, qkv_has_bias(c)) + linear(c.d_model, c.d_model, c.bias)
    cross = cross if c.family == "encoder-decoder" else 0
    return 2 * (c.decoder_layers * (attention_params(c) + active_ffn_params(c) + cross) + c.vocab * c.d_model)


def decode_flops_per_token(c: ModelConfig, context: int, cached: bool, source: int = 0) -> tuple[int, int]:
    """FLOPs to produce one new token at context L = `context`, split as (d^2 part, L*d part).

    `context` is how many keys the new token's query sees (itself included). The d^2 part is every weight
    matmul (`token_weight_flops`), the L*d part the attention scores and weighted sum (2 matmuls of 2*L*E
    FLOPs per self-attention layer; `source` keys for cross-attention). Cached: one token. Uncached: the
    decoder reruns all L tokens (the head included: `decode` returns logits for every position), query i
    seeing i keys under the causal mask, and re-projects the source's keys and values for cross-attention.
    """
    if context < 1 or source < 0:
        raise ValueError(f"context ({context}) must be >= 1 and source ({source}) >= 0")
    e, layers = c.d_model, c.decoder_layers
    cross = c.family == "encoder-decoder"
    cross_ld = layers * 4 * source * e if cross else 0  # one query over the source's keys
    if cached:
        own = core_flops_per_token(c, context) if is_approximate(c) else 4 * newest_keys(c, context) * e
        return token_weight_flops(c), layers * own + cross_ld
    memory_kv = layers * source * 2 * linear(e, 2 * kv_dim(c), qkv_has_bias(c)) if cross else 0
    triangle = _pairs(c, context, causal=True)  # full causal: sum of i for i = 1..L; a window sees fewer
    own = context * core_flops_per_token(c, context) if is_approximate(c) else 4 * e * triangle
    return context * token_weight_flops(c) + memory_kv, layers * own + context * cross_ld


def encoder_flops(c: ModelConfig, source: int) -> int:
    """One pass of the encoder over `source` tokens (every query sees every key)."""
    per_token = 2 * (attention_params(c) + active_ffn_params(c))
    return c.encoder_layers * (source * per_token + 4 * _pairs(c, source, causal=False) * c.d_model)


def decode_step_flops(c: ModelConfig, prompt_len: int, new_tokens: int, cached: bool) -> list[tuple[int, int]]:
    """(d^2, L*d) FLOPs of each step of a greedy run, as `bench.kv_speed` times them.

    Step k (from 0) predicts token k from a context of prompt_len + k tokens (decoder-only) or 1 + k
    (an encoder-decoder's target, the prompt being the source). The cached run's first step fills the
    cache with the whole prefix, so it costs what the uncached step does (for an encoder-decoder, the
    source's keys and values included, plus the encoder pass on either path). Learned positions past max_len slide:
    the decoder reruns the last max_len tokens without the cache.
    """
    cross = c.family == "encoder-decoder"
    source, start = (prompt_len, 1) if cross else (0, prompt_len)
    window = c.max_len if c.positions == "learned" else None
    steps = []
    for k in range(new_tokens):
        context = start + k
        slid = window is not None and context > window
        reuse = cached and k > 0 and not slid
        d2, ld = decode_flops_per_token(c, min(context, window) if slid else context, reuse, source)
        if cross and k == 0:
            d2 += encoder_flops(c, source)  # the timer's first mark includes the encoder pass
        steps.append((d2, ld))
    return steps


# --- What grouped-query attention does to the KV cache (Ainslie et al. 2023) ----------------------
@dataclass(frozen=True)
class KVVariant:
    name: str  # "MHA", "GQA" or "MQA"
    kv_heads: int
    per_token: int  # bytes of K and V for one token, every decoder layer
    full: int  # for max_len tokens, one sequence (a sliding window's rolling buffer when it has one)
    current: bool  # the config's own choice


def example_kv_heads(heads: int) -> int | None:
    """A grouped choice for `heads` query heads: the largest divisor up to heads/4 (Mistral shares each k/v
    head among 4), else the largest proper divisor above 1; None when heads is prime or 1."""
    divisors = [k for k in range(2, heads) if heads % k == 0]
    quarter = [k for k in divisors if 4 * k <= heads]
    return (quarter or divisors or [None])[-1]


def kv_cache_variants(c: ModelConfig, dtype: str = "float32") -> list[KVVariant]:
    """The config's KV cache with multi-head, grouped-query and multi-query attention, everything else equal.

    GQA is the config's own kv_heads when it is grouped, else `example_kv_heads`; absent when none exists."""
    own = c.n_kv_heads
    grouped = own if 1 < own < c.heads else example_kv_heads(c.heads)
    choices = [("MHA", c.heads), ("GQA", grouped), ("MQA", 1)]
    out = []
    for name, k in choices:
        if k is None or (name == "MQA" and c.heads == 1):
            continue
        per_token = kv_bytes_per_token(c.replace(kv_heads=k), dtype)
        out.append(KVVariant(name, k, per_token, per_token * kv_cache_tokens(c, c.max_len), k == own))
    return out
