"""What Linformer and Performer cost, from the config alone (no torch): FLOPs, the tensors they keep, the cache.

Per token and per self-attention layer, a multiply-add counted as 2 (as `cost.py`):
- softmax: scores and weighted sum over the L keys a query sees, 2 x 2 x E each;
- linformer: the same over k projected rows (4 k E), plus projecting K and V along the sequence (E^T K and F^T V:
  2 k x kv_dim each per position);
- performer: features of q and of k (2 m E each, k repeated to every head), the running sum phi(k) v^T (2 m E),
  phi(q) S (2 m E) and the normaliser phi(q) z (2 m per head): L-independent, which is the point.
"""

from __future__ import annotations

from tui_lab.config import ModelConfig

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def is_approximate(c: ModelConfig) -> bool:
    return c.self_attention != "softmax"


def core_flops_per_token(c: ModelConfig, context: int) -> int:
    """Self-attention's core (everything but the q/k/v/out projections) for one token of an approximation."""
    e = c.d_model
    if c.self_attention == "linformer":
        rows = min(c.linformer_rows, context)
        return 4 * rows * e + 2 * 2 * rows * c.n_kv_heads * c.d_head
    m = c.n_features
    return 2 * m * (4 * e + c.heads)


def score_columns(c: ModelConfig, seq_len: int) -> int:
    """Columns of the (L x ?) tensors a self-attention layer keeps per head for backward: the L x L scores for
    softmax, L x k for Linformer, the features phi(q) and phi(k), L x m, for Performer."""
    if c.self_attention == "linformer":
        return min(c.linformer_rows, seq_len)
    if c.self_attention == "performer":
        return c.n_features
    return seq_len


def performer_state_bytes(c: ModelConfig, batch: int = 1, dtype: str = "float32") -> int:
    """Performer's decoding cache: S (H, m, D) and z (H, m) per decoder layer, whatever the context length."""
    return c.decoder_layers * batch * c.heads * c.n_features * (c.d_head + 1) * DTYPE_BYTES[dtype]


def scores_note(c: ModelConfig, n: int, length: int) -> str:
    """The shape trace's note on a self-attention row: what stands where exact attention's (N, H, L, L) scores do."""
    h = c.heads
    if c.self_attention == "linformer":
        rows = min(c.linformer_rows, length)
        return (f"scores (N, H, L, k) = {(n, h, length, rows)} against E^T K; E, F ({c.max_len}, {c.linformer_rows}) "
                f"project keys and values along the sequence")
    if c.self_attention == "performer":
        m = c.n_features
        return f"features phi(q), phi(k) (N, H, L, m) = {(n, h, length, m)}; no L x L scores (FAVOR+)"
    return f"scores (N, H, L, L) = {(n, h, length, length)}"
