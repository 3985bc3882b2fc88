"""Where an attention layer meets the hook points: q/k/v by head, the rotated q/k, the scores and pattern, z and
each head's result, in TransformerLens's layouts. Only called when a HookScope is passed (model/hooks.py)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from tui_lab.model.hooks import HookScope


def hook_heads(hooks: HookScope, name: str, x: Tensor, heads: int) -> Tensor:
    """(N, L, heads * D) through the point `name` as (N, L, heads, D), TransformerLens's layout."""
    n, length, width = x.shape
    return hooks(name, x.view(n, length, heads, width // heads)).reshape(n, length, width)


def hook_z(hooks: HookScope, out: Tensor) -> Tensor:
    """Attention's per-head output (N, H, L, D) through `hook_z` as (N, L, H, D), merged to (N, L, E)."""
    z = hooks("hook_z", out.transpose(1, 2))
    return z.reshape(*z.shape[:2], -1)


def head_output(proj: nn.Linear, hooks: HookScope, out: Tensor) -> Tensor:
    """The output projection of the heads' output (N, H, L, D), through `hook_z` and, when something is attached
    there, `hook_result` (N, L, H, E): each head's write z_h @ W_O^h before the sum, without the bias. Read only,
    the projection runs as without it (bit for bit); replaced, the heads' writes are summed and the bias added."""
    merged = hook_z(hooks, out)
    if not hooks.wants("hook_result"):
        return proj(merged)
    z = merged.view(*merged.shape[:2], out.shape[1], -1)  # (N, L, H, D)
    w = proj.weight.view(proj.weight.shape[0], out.shape[1], -1)  # (E, H, D)
    result = torch.einsum("nlhd,ehd->nlhe", z, w)
    new = hooks("hook_result", result)
    if new is result:
        return proj(merged)
    summed = new.sum(dim=2)
    return summed if proj.bias is None else summed + proj.bias


def rotated(hooks: HookScope, name: str, x: Tensor) -> Tensor:
    """q or k (N, H, L, D) after RoPE through `hook_rot_q` / `hook_rot_k` as (N, L, H, D), when one is attached."""
    if not hooks.wants(name):
        return x
    return hooks(name, x.transpose(1, 2)).transpose(1, 2)


def by_position_hook(hooks: HookScope, name: str, rolled: Tensor | None, end: int, fill: float
                      ) -> Callable[[Tensor], Tensor] | None:
    """The point `name` (scores or pattern) with keys by position 0..end-1, as a full pass has them, even over a
    rolling cache's slots (positions it no longer holds read `fill`); None when nothing is attached there."""
    if not hooks.wants(name):
        return None
    if rolled is None:
        return lambda grid: hooks(name, grid)

    def by_position(grid: Tensor) -> Tensor:
        full = _by_position(grid, rolled, end, fill)
        new = hooks(name, full)
        return grid if new is full else new[..., rolled.clamp(min=0)].masked_fill(rolled < 0, fill)

    return by_position


def _by_position(weights: Tensor, k_pos: Tensor, end: int, fill: float = 0.0) -> Tensor:
    """Weights over a rolling cache's slots (N, H, L, slots) -> over positions 0..end-1, as a full pass has them."""
    grid = weights.new_full((*weights.shape[:-1], end), fill)
    seen = k_pos >= 0
    return grid.index_copy_(-1, k_pos[seen], weights[..., seen])
