"""Relative positions: Shaw et al. 2018's learned key/value embeddings and T5's bucketed bias (Raffel et al. 2020).

Both act inside self-attention by the distance j - i between a key and a query, so neither adds a vector to
the embeddings and neither has a hard `max_len`; cross-attention has no positions in either paper.
- `relative` (Shaw, section 3.2): e_ij = q_i (k_j + a^K_ij)^T / sqrt(D), z_i = sum_j w_ij (v_j + a^V_ij), with
  a_ij = table[clip(j - i, -k, k)]; two (2k+1, D) tables per layer, shared by the heads as in the paper.
- `t5` (T5, section 2.1): a learned scalar per head and distance bucket added to the scores; half the buckets
  hold exact distances, the rest log-spaced distances up to `relative_max_distance`; bidirectional in the
  encoder, causal in the decoder. The table lives in the first layer and its bias serves every layer.

Dimension legend: N batch, H heads, L query length, S key length, D d_head, R table rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

RELATIVE = ("relative", "t5")


def shaw_index(q_pos: Tensor, k_pos: Tensor, clip: int) -> Tensor:
    """(L, S) row of Shaw's table for each query/key pair: clip(j - i, -k, k) + k, in [0, 2k]."""
    return (k_pos[None, :] - q_pos[:, None]).clamp(-clip, clip) + clip


def t5_bucket(relative: Tensor, bidirectional: bool, buckets: int, max_distance: int) -> Tensor:
    """transformers' T5Attention._relative_position_bucket: relative = key - query -> bucket in [0, buckets)."""
    bucket = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        bucket = bucket + (relative > 0).long() * buckets  # later keys take the upper half
        distance = relative.abs()
    else:
        distance = -relative.clamp(max=0)  # a causal query sees only earlier keys
    exact = buckets // 2
    far = exact + (torch.log(distance.float().clamp(min=1) / exact) / math.log(max_distance / exact)
                   * (buckets - exact)).long()
    far = far.clamp(max=buckets - 1)
    return bucket + torch.where(distance < exact, distance, far)


class ShawRelative(nn.Module):
    """One layer's relative key and value tables (2k+1, D), shared by its heads."""

    def __init__(self, config) -> None:
        super().__init__()
        self.clip = config.relative_clip
        self.keys = nn.Embedding(2 * self.clip + 1, config.d_head)
        self.values = nn.Embedding(2 * self.clip + 1, config.d_head)

    def key_scores(self, q: Tensor, index: Tensor) -> Tensor:
        """q_i . a^K_ij (N, H, L, S): q against every row once (N, H, L, R), then picked per pair."""
        by_row = q @ self.keys.weight.T.to(q.dtype)
        return by_row.gather(-1, index.expand(*q.shape[:2], -1, -1))

    def value_term(self, weights: Tensor, index: Tensor) -> Tensor:
        """sum_j w_ij a^V_ij (N, H, L, D): the weights summed per row (N, H, L, R), then times the table."""
        rows = weights.new_zeros(*weights.shape[:-1], self.values.weight.shape[0])
        rows.scatter_add_(-1, index.expand_as(weights), weights)
        return rows @ self.values.weight.to(weights.dtype)

    def attend_at(self, attend: Callable, q_pos: Tensor, k_pos: Tensor) -> Callable:
        """`attend` (attention.attend's signature) with this table's key scores and value term added.

        The value term needs the weights, so the manual path runs; dropout is applied here, in the pattern
        hook, so the weights that meet v also meet a^V."""
        index = shaw_index(q_pos, k_pos, self.clip)

        def run(q, k, v, allowed, bias, causal, dropout_p, need_weights, scale, pattern_hook=None,
                scores_hook=None):
            factor = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
            extra = self.key_scores(q, index) * factor
            kept: list[Tensor] = []

            def pattern(weights: Tensor) -> Tensor:
                weights = pattern_hook(weights) if pattern_hook is not None else weights
                kept.append(F.dropout(weights, dropout_p) if dropout_p else weights)
                return kept[-1]

            out, weights = attend(q, k, v, allowed, extra if bias is None else bias + extra, causal, 0.0,
                                  need_weights, scale, pattern, scores_hook)
            return out + self.value_term(kept[-1], index), weights

        return run


class T5Bias(nn.Module):
    """T5's (buckets, H) table; the first layer's computes the (H, L, S) bias and the later layers reuse it."""

    def __init__(self, config, bidirectional: bool) -> None:
        super().__init__()
        self.bidirectional = bidirectional
        self.buckets, self.max_distance = config.relative_buckets, config.relative_max_distance
        self.table = nn.Embedding(config.relative_buckets, config.heads)
        self._last: tuple[tuple, Tensor] | None = None  # the first layer's bias of this pass

    def forward(self, start: int, end: int, k_pos: Tensor, first: bool, rolled: bool = False) -> Tensor:
        """(H, L, S) bias of queries start..end-1 over keys at `k_pos`; `first` (the owning layer) always
        computes it, later layers of the same pass take the same tensor (plain ints: no device sync)."""
        key = (start, end, k_pos.shape[0], k_pos.device, torch.is_grad_enabled())
        if not first and not rolled and self._last is not None and self._last[0] == key:
            return self._last[1]
        q_pos = torch.arange(start, end, device=k_pos.device)
        bucket = t5_bucket(k_pos[None, :] - q_pos[:, None], self.bidirectional, self.buckets, self.max_distance)
        bias = self.table(bucket).permute(2, 0, 1)  # (L, S, H) -> (H, L, S)
        self._last = None if rolled else (key, bias)
        return bias


def share_t5_bias(blocks: nn.ModuleList, config) -> None:
    """Give the stack's first self-attention the T5 table and every later one a reference to it (not a
    submodule of theirs: the table is counted and saved once, as `blocks.0.attn.t5_bias`)."""
    if config.positions != "t5" or len(blocks) == 0:
        return
    owner = T5Bias(config, bidirectional=not blocks[0].attn.causal)
    blocks[0].attn.t5_bias = owner
    for block in blocks[1:]:
        block.attn.shared_t5 = [owner]  # a list, so nn.Module does not register it a second time


def position_grids(model: nn.Module, length: int) -> dict[tuple[str, int], Tensor]:
    """What the Attention view draws over `length` query x key positions, per layer, as (heads, L, L):
    T5: the bias each head adds to the scores (the first layer's table, which every layer uses; the decoder's
    where there is one); relative: the norm |a^K_(j-i)| of the key row each pair reads (shared by the heads,
    so one grid per layer). Empty for the other position kinds."""
    config = model.config
    stack = model.decoder if len(model.decoder) else model.encoder
    positions = torch.arange(length, device=next(model.parameters()).device)
    with torch.no_grad():
        if config.positions == "t5":
            bias = stack[0].attn.t5_bias(0, length, positions, first=True)
            return {("pos-t5", 0): bias.float()}
        if config.positions == "relative":
            grids = {}
            for i, block in enumerate(stack):
                shaw = block.attn.shaw
                norms = shaw.keys.weight.float().norm(dim=-1)  # (2k+1,)
                grids[("pos-relative", i)] = norms[shaw_index(positions, positions, shaw.clip)][None]
            return grids
    return {}
