"""Attribution patching (Nanda 2023, "Attribution Patching: Activation Patching At Industrial Scale"): activation
patching's table from one forward and one backward pass, to first order.

Restoring the clean activation a at a point in the corrupted run moves the metric by about
(a_clean - a_corrupt) . dm/da (the gradient taken in the corrupted run): a linear approximation, good where the
metric is close to linear in that activation, poor where attention saturates or a norm rescales. The tables
have activation patching's shapes and normalisation (`patching.activation_patching`): per layer and position
for the stream points (the dot product over d_model), per head for z and pattern (summed over positions, d_head,
and query-key pairs). `benchmarks/agreement/attribution_patching.py` measures how close they come.
Dimension legend: L length, H heads, D d_head, E d_model.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.mechanism.cache import require_causal
from tui_lab.mechanism.gradients import run_with_gradients
from tui_lab.mechanism.patching import PatchMetric, PatchTable, gap_warning, kind_points, measured


def _per_column(change: Tensor, kind: str) -> Tensor:
    """(clean - corrupt) * grad of one row -> one value per column."""
    if kind == "z":
        return change.sum(dim=(0, 2))  # (L, H, D) -> (H,)
    if kind == "pattern":
        return change.sum(dim=(1, 2))  # (H, Lq, Lk) -> (H,)
    return change.sum(dim=-1)  # (L, E) -> (L,)


def attribution_patching(
    model, clean_ids: Tensor, corrupt_ids: Tensor, metric: PatchMetric, kind: str = "resid_pre"
) -> PatchTable:
    """clean_ids, corrupt_ids (L,) -> the first-order estimate of `activation_patching`'s table for `kind` (kind
    named `attribution <kind>` in the table). Decoder-only models."""
    require_causal(model.config, "attribution patching")
    points = kind_points(model, kind)
    with torch.no_grad():
        m_clean, m_corrupt, clean = measured(model, metric, clean_ids, corrupt_ids, [None, None], points)
    _, corrupt, grads = run_with_gradients(model, corrupt_ids[None], metric=metric, names=points)
    values = []
    for point in points:
        change = (clean[point][0] - corrupt[point][0]) * grads[point][0]
        values.append((_per_column(change, kind) / (m_clean - m_corrupt)).tolist())
    return PatchTable(
        m_clean, m_corrupt, values, points, f"attribution {kind}", metric.kind, gap_warning(metric, m_clean, m_corrupt)
    )
