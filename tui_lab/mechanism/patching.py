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

from tui_lab.mechanism.cache import layer_points, require_stream, run_with_cache, run_with_hooks, stream_inputs


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
                   on_step: Callable[[int, int], None] | None = None, clean_src: Tensor | None = None,
                   corrupt_src: Tensor | None = None) -> PatchTable:
    """clean_ids, corrupt_ids (L,) of one length -> the layers x positions table of recovered logit difference.

    One pass per layer: the corrupted prompt repeated L times, row t patched at position t. `on_step(done,
    total)` after each layer (a caller's progress; it may raise to stop). An encoder-decoder's runs read their
    sources `clean_src`, `corrupt_src` (S,) (any lengths); the patched stream is the decoder's."""
    require_stream(model.config, "patch")
    if (clean_src is None or corrupt_src is None) != (model.config.family != "encoder-decoder"):
        raise ValueError("patch: clean_src and corrupt_src (the sources) are read by an encoder-decoder, and only it")
    if clean_ids.shape != corrupt_ids.shape:
        raise ValueError(f"corrupt: the clean and corrupted prompts must be as long as each other "
                         f"({clean_ids.shape[-1]} and {corrupt_ids.shape[-1]} tokens)")
    points = layer_points(model.config, "hook_resid_pre")
    sources = [None if s is None else s[None] for s in (clean_src, corrupt_src)]  # (1, S) each
    clean_logits, cache = run_with_cache(model, *stream_inputs(clean_ids[None], sources[0]), names=points)
    ld_clean = float(logit_difference(clean_logits, answer, wrong)[0])
    ld_corrupt = float(logit_difference(model(*stream_inputs(corrupt_ids[None], sources[1])), answer, wrong)[0])
    if abs(ld_clean - ld_corrupt) < 1e-6:
        raise ValueError(f"corrupt: the clean and corrupted prompts give the same logit difference "
                         f"({ld_clean:.4g}); nothing is left to restore")
    batch = corrupt_ids.expand(len(corrupt_ids), -1)  # (L, L)
    values = []
    for point in points:
        patched = run_with_hooks(model, *stream_inputs(batch, sources[1]),
                                 hooks=[(point, restore_positions(cache[point][0]))])
        ld = logit_difference(patched, answer, wrong)  # (L,)
        values.append(((ld - ld_corrupt) / (ld_clean - ld_corrupt)).tolist())
        if on_step is not None:
            on_step(len(values), len(points))
    return PatchTable(ld_clean, ld_corrupt, values, points)
