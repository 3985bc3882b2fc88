"""Each attention head's own matrices, cut from the fused weights, in the row-vector convention x @ W.

W_Q (E, D), W_K (E, D), W_V (E, D) read the block's normed input; W_O (D, E) writes the residual stream.
Grouped-query heads share their kv head's W_K, W_V (query head h reads kv head h // (H/K)).
Dimension legend: E d_model, D d_head, H heads, K kv heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True)
class HeadWeights:
    q: Tensor  # (E, D)
    k: Tensor  # (E, D)
    v: Tensor  # (E, D)
    o: Tensor  # (D, E)


def head_weights(block, head: int) -> HeadWeights:
    """The matrices of `head` in one block's self-attention (`block.attn`: qkv (E + 2KD, E), out (E, E))."""
    attn = block.attn
    e = attn.out.weight.shape[0]
    d = e // attn.heads
    kv = head // (attn.heads // attn.kv_heads)
    w = attn.qkv.weight  # rows: q (H*D), k (K*D), v (K*D)
    k_rows, v_rows = e + kv * d, e + attn.kv_heads * d + kv * d
    return HeadWeights(q=w[head * d:(head + 1) * d].T, k=w[k_rows:k_rows + d].T, v=w[v_rows:v_rows + d].T,
                       o=attn.out.weight[:, head * d:(head + 1) * d].T)


def output_slice(block, head: int) -> Tensor:
    """W_O of `head` (D, E): z[..., head, :] @ this is the head's write to the residual stream."""
    attn = block.attn
    d = attn.out.weight.shape[0] // attn.heads
    return attn.out.weight[:, head * d:(head + 1) * d].T
