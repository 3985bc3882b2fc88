"""Head ablation: how much a metric moves when one head's output (`hook_z`) is taken away.

Zero ablation replaces the head's z by zero; mean ablation by its mean over the evaluation batch's
positions (one D-vector per head), which keeps the average signal the next layers expect. The metric is
the next-token loss over the batch, or one token's logit at one position.
Dimension legend: N batch, L length, H heads, D d_head.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from tui_lab.mechanism.cache import head_points, require_stream, run_with_cache, run_with_hooks, stream_inputs

MODES = ("zero", "mean")


@dataclass(frozen=True)
class Metric:
    """The next-token loss (token None), or the logit of `token` at `position` (of the first row)."""

    token: int | None = None
    position: int = -1

    @property
    def name(self) -> str:
        return "loss" if self.token is None else "logit"

    def __call__(self, logits: Tensor, ids: Tensor) -> float:
        if self.token is None:
            return next_token_loss(logits, ids)
        return float(logits[0, self.position, self.token])


def next_token_loss(logits: Tensor, ids: Tensor) -> float:
    """Mean cross-entropy of predicting ids[:, 1:] from logits[:, :-1]."""
    if ids.shape[1] < 2:
        raise ValueError("text: the loss needs at least two tokens")
    return float(F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten()))


@dataclass
class AblationTable:
    """values[l][h] = metric with head (l, h) ablated - metric of the clean pass. `rows` names each row: a layer
    (`L0`), or for an encoder-decoder `enc L0`, `dec L0 self`, `dec L0 cross`."""

    mode: str
    metric: str
    clean: float
    values: list[list[float]]
    rows: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        flat = [(v, layer, h) for layer, row in enumerate(self.values) for h, v in enumerate(row)]
        ranked = sorted(flat, key=lambda x: -abs(x[0]))  # the heads that matter most first
        return {"mode": self.mode, "metric": self.metric, "clean": self.clean, "layers": len(self.values),
                "rows": self.rows,
                "heads": len(self.values[0]) if self.values else 0, "delta": self.values,
                "ranked": [{"layer": layer, "head": h, "delta": v} for v, layer, h in ranked]}


def ablate_head(layer: int, head: int, replacement: Tensor | None):
    """A `hook_z` function that puts `replacement` (D,) (None: zeros) in head `head`'s place."""
    def hook(z: Tensor, _: str) -> Tensor:  # z (N, L, H, D)
        z = z.clone()
        z[:, :, head] = 0.0 if replacement is None else replacement
        return z

    return hook


@torch.no_grad()
def head_ablation(model, ids: Tensor, mode: str = "zero", metric: Metric | None = None,
                  on_step: Callable[[int, int], None] | None = None, src: Tensor | None = None) -> AblationTable:
    """Ablate every head in turn on the batch ids (N, L); one pass per head. `on_step(done, total)` after each
    pass (a caller's progress; it may raise to stop). An encoder-decoder reads the source `src` (1, S) and
    teacher-forced target ids; its encoder heads and each decoder layer's self- and cross-attention heads are
    ablated alike, the metric on the decoder's output."""
    require_stream(model.config, "ablate")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if (src is None) != (model.config.family != "encoder-decoder"):
        raise ValueError("ablate: src (the source ids) is what an encoder-decoder reads, and only it")
    metric = metric or Metric()
    rows = head_points(model.config)
    inputs = stream_inputs(ids, src)
    logits, cache = run_with_cache(model, *inputs, names=[point for _, point in rows])
    clean = metric(logits, ids)
    values, heads = [], model.config.heads
    for r, (_, point) in enumerate(rows):
        means = cache[point].mean(dim=(0, 1))  # (H, D): each head's mean over the batch's positions
        row = []
        for head in range(heads):
            fn = ablate_head(r, head, None if mode == "zero" else means[head])
            row.append(metric(run_with_hooks(model, *inputs, hooks=[(point, fn)]), ids) - clean)
            if on_step is not None:
                on_step(r * heads + head + 1, len(rows) * heads)
        values.append(row)
    return AblationTable(mode, metric.name, clean, values, [label for label, _ in rows])
