"""Activation patching (Meng et al. 2022; Wang et al. 2022): which layer and position carry the answer.

Run a corrupted prompt, put back the clean run's residual stream (`hook_resid_pre`) at one layer and one
position, and measure how much of the clean logit difference comes back:
(LD_patched - LD_corrupt) / (LD_clean - LD_corrupt), LD = logit(answer) - logit(wrong) at the last position.
1 means that point alone restores the answer; 0 that it carries nothing of it.
Dimension legend: L length, E d_model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from tui_lab.mechanism.cache import layer_points, require_causal, run_with_cache, run_with_hooks


def logit_difference(logits: Tensor, answer: int, wrong: int) -> Tensor:
    """(N, L, V) -> (N,): logit(answer) - logit(wrong) at the last position of each row."""
    return logits[:, -1, answer] - logits[:, -1, wrong]


@dataclass
class PatchTable:
    """values[l][t]: the normalised recovery when the clean resid_pre of layer l is restored at position t."""

    ld_clean: float
    ld_corrupt: float
    values: list[list[float]]
    points: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"ld_clean": self.ld_clean, "ld_corrupt": self.ld_corrupt, "points": self.points,
                "recovery": self.values}


def restore_positions(clean: Tensor):
    """A hook for a batch of L copies of the corrupted run: row t gets the clean stream (L, E) at position t."""
    def hook(resid: Tensor, _: str) -> Tensor:  # (L, L, E): one row per patched position
        rows = torch.arange(resid.shape[0], device=resid.device)
        resid = resid.clone()
        resid[rows, rows] = clean[rows]
        return resid

    return hook


@torch.no_grad()
def patch_residual(model, clean_ids: Tensor, corrupt_ids: Tensor, answer: int, wrong: int,
                   on_step: Callable[[int, int], None] | None = None) -> PatchTable:
    """clean_ids, corrupt_ids (L,) of one length -> the layers x positions table of recovered logit difference.

    One pass per layer: the corrupted prompt repeated L times, row t patched at position t. `on_step(done,
    total)` after each layer (a caller's progress; it may raise to stop)."""
    require_causal(model.config, "patch")
    if clean_ids.shape != corrupt_ids.shape:
        raise ValueError(f"corrupt: the clean and corrupted prompts must be as long as each other "
                         f"({clean_ids.shape[-1]} and {corrupt_ids.shape[-1]} tokens)")
    points = layer_points(model.config, "hook_resid_pre")
    clean_logits, cache = run_with_cache(model, clean_ids[None], names=points)
    ld_clean = float(logit_difference(clean_logits, answer, wrong)[0])
    ld_corrupt = float(logit_difference(model(corrupt_ids[None]), answer, wrong)[0])
    if abs(ld_clean - ld_corrupt) < 1e-6:
        raise ValueError(f"corrupt: the clean and corrupted prompts give the same logit difference "
                         f"({ld_clean:.4g}); nothing is left to restore")
    batch = corrupt_ids.expand(len(corrupt_ids), -1)  # (L, L)
    values = []
    for point in points:
        patched = run_with_hooks(model, batch, hooks=[(point, restore_positions(cache[point][0]))])
        ld = logit_difference(patched, answer, wrong)  # (L,)
        values.append(((ld - ld_corrupt) / (ld_clean - ld_corrupt)).tolist())
        if on_step is not None:
            on_step(len(values), len(points))
    return PatchTable(ld_clean, ld_corrupt, values, points)
