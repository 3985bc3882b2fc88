"""Head ablation: how much a metric moves when one head's output (`hook_z`) is taken away.

Zero ablation replaces the head's z by zero; mean ablation by its mean over the evaluation batch's
positions (one D-vector per head), which keeps the average signal the next layers expect, or over a reference
batch (`reference`: e.g. held-out text of the model's data), so the sentence measured is not also the
distribution its heads are averaged over. The metric is
the next-token loss, or one token's logit at one position, measured on every row of the batch: the table
holds the mean change over the rows and its spread (the rows' standard deviation), since one window's
change can have the other sign than the next one's (a metric read off one row alone would hide that).
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


RowMetric = Callable[[Tensor, Tensor], float]  # (logits, ids) -> one number for the batch (e.g. RepeatLoss)


@dataclass(frozen=True)
class Metric:
    """The next-token loss (token None), or the logit of `token` at `position`, per row of the batch."""

    token: int | None = None
    position: int = -1

    @property
    def name(self) -> str:
        return "loss" if self.token is None else "logit"

    def per_row(self, logits: Tensor, ids: Tensor) -> Tensor:
        """(N,): each row's metric (its mean next-token loss, or the token's logit at the position)."""
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))  # half precision sums in float32
        if self.token is None:
            if ids.shape[1] < 2:
                raise ValueError("text: the loss needs at least two tokens")
            losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")
            return losses.mean(dim=1)
        return logits[:, self.position, self.token]

    def __call__(self, logits: Tensor, ids: Tensor) -> float:
        """The mean over the rows (rows of one length: the batch's mean loss)."""
        return float(self.per_row(logits, ids).mean())


def next_token_loss(logits: Tensor, ids: Tensor) -> float:
    """Mean cross-entropy of predicting ids[:, 1:] from logits[:, :-1]."""
    if ids.shape[1] < 2:
        raise ValueError("text: the loss needs at least two tokens")
    return float(F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten()))


@dataclass
class AblationTable:
    """values[l][h] = metric with head (l, h) ablated - metric of the clean pass, the mean over the batch's rows;
    spread[l][h] the rows' standard deviation of that change (0 for one row; empty for a metric of the whole
    batch); per_row[l][h][n] each row's change. `rows` names each table row: a layer (`L0`), or for an
    encoder-decoder `enc L0`, `dec L0 self`, `dec L0 cross`."""

    mode: str
    metric: str
    clean: float
    values: list[list[float]]
    rows: list[str] = field(default_factory=list)
    spread: list[list[float]] = field(default_factory=list)
    per_row: list[list[list[float]]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        flat = [(v, layer, h) for layer, row in enumerate(self.values) for h, v in enumerate(row)]
        ranked = sorted(flat, key=lambda x: -abs(x[0]))  # the heads that matter most first
        return {"mode": self.mode, "metric": self.metric, "clean": self.clean, "layers": len(self.values),
                "rows": self.rows, "heads": len(self.values[0]) if self.values else 0, "delta": self.values,
                "spread": self.spread, "delta_per_window": self.per_row,
                "ranked": [{"layer": layer, "head": h, "delta": v} for v, layer, h in ranked]}


def ablate_head(layer: int, head: int, replacement: Tensor | None):
    """A `hook_z` function that puts `replacement` (D,) (None: zeros) in head `head`'s place."""
    def hook(z: Tensor, _: str) -> Tensor:  # z (N, L, H, D)
        z = z.clone()
        z[:, :, head] = 0.0 if replacement is None else replacement
        return z

    return hook


@torch.no_grad()
def head_ablation(model, ids: Tensor, mode: str = "zero", metric: Metric | RowMetric | None = None,
                  on_step: Callable[[int, int], None] | None = None, src: Tensor | None = None,
                  reference: Tensor | None = None) -> AblationTable:
    """Ablate every head in turn on the batch ids (N, L); one pass per head. `on_step(done, total)` after each
    pass (a caller's progress; it may raise to stop). An encoder-decoder reads the source `src` (1, S) and
    teacher-forced target ids; its encoder heads and each decoder layer's self- and cross-attention heads are
    ablated alike, the metric on the decoder's output. A `Metric` is measured per row (mean, spread and each row's
    change in the table); any other callable `metric(logits, ids) -> float` once for the whole batch. `reference`
    (N', L') ids: mean ablation takes each head's mean over its positions instead of the batch's."""
    require_stream(model.config, "ablate")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if (src is None) != (model.config.family != "encoder-decoder"):
        raise ValueError("ablate: src (the source ids) is what an encoder-decoder reads, and only it")
    metric = metric or Metric()
    rows = head_points(model.config)
    inputs = stream_inputs(ids, src)
    measure = metric.per_row if isinstance(metric, Metric) else lambda lg, i: torch.tensor([metric(lg, i)])
    logits, cache = run_with_cache(model, *inputs, names=[point for _, point in rows])
    clean = measure(logits, ids)  # (N,), or (1,) for a whole-batch metric
    means_from = cache if reference is None else reference_cache(model, reference, mode, src, rows)
    changes, heads = [], model.config.heads
    if on_step is not None:  # the passes start: a caller times them from here
        on_step(0, len(rows) * heads)
    for r, (_, point) in enumerate(rows):
        means = means_from[point].mean(dim=(0, 1))  # (H, D): each head's mean over the batch's positions
        row = []
        for head in range(heads):
            fn = ablate_head(r, head, None if mode == "zero" else means[head])
            row.append(measure(run_with_hooks(model, *inputs, hooks=[(point, fn)]), ids) - clean)
            if on_step is not None:
                on_step(r * heads + head + 1, len(rows) * heads)
        changes.append(torch.stack(row))
    delta = torch.stack(changes)  # (R, H, N)
    table = AblationTable(mode, metric.name, float(clean.mean()), delta.mean(dim=-1).tolist(),
                          [label for label, _ in rows])
    if isinstance(metric, Metric):
        table.spread = delta.std(dim=-1, unbiased=False).tolist()
        table.per_row = delta.tolist()
    return table


def reference_cache(model, reference: Tensor, mode: str, src: Tensor | None, rows: list[tuple[str, str]]):
    """Each head's `hook_z` on the reference ids (N', L'), whose means mean ablation puts in its place."""
    if mode != "mean":
        raise ValueError(f"reference: only mean ablation averages over a reference batch (mode {mode!r})")
    if src is not None:
        raise ValueError("reference: an encoder-decoder's means come from the batch measured (each target has its "
                         "source)")
    if reference.dim() != 2 or reference.shape[1] < 1:
        raise ValueError(f"reference: token ids (N, L) are needed, got shape {tuple(reference.shape)}")
    return run_with_cache(model, reference.to(next(model.parameters()).device), names=[p for _, p in rows])[1]
