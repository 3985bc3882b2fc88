"""Activation patching (Meng et al. 2022; Wang et al. 2022): which layer, position or head carries the answer.

Run a corrupted prompt, put back the clean run's activation at one point, and measure how much of the clean
metric comes back: (m_patched - m_corrupt) / (m_clean - m_corrupt). 1 means that point alone restores the
answer; 0 that it carries nothing of it. The points are TransformerLens's `get_act_patch_*` family: the residual
stream before, between and after a block's sublayers and their outputs (a layers x positions table), and each
head's `hook_z` or `hook_pattern` at every position at once (a layers x heads table). The metric, read at the
last position: the logit difference answer - wrong, the answer's logit, or the loss -log p(answer).
A small or wrong-signed clean-corrupt gap makes every recovery a ratio of noise: the table says so (`warning`).
Dimension legend: N batch, L length, H heads, D d_head, E d_model, V vocab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from tui_lab.mechanism.cache import layer_points, require_stream, run_with_cache, run_with_hooks, stream_inputs
from tui_lab.model.hooks import point_names

# kind -> the block's point; the first five are (N, L, E) streams, patched per position
POINTS = {
    "resid_pre": "hook_resid_pre",
    "resid_mid": "hook_resid_mid",
    "resid_post": "hook_resid_post",
    "attn_out": "hook_attn_out",
    "mlp_out": "hook_mlp_out",
    "z": "attn.hook_z",
    "pattern": "attn.hook_pattern",
}
HEAD_KINDS = ("z", "pattern")
METRICS = ("logit_diff", "logit", "loss")
SMALL_GAP = 0.5  # logits (or nats): a gap under this makes recoveries ratios of small differences


def logit_difference(logits: Tensor, answer: int, wrong: int) -> Tensor:
    """(N, L, V) -> (N,): logit(answer) - logit(wrong) at the last position of each row."""
    return logits[:, -1, answer] - logits[:, -1, wrong]


@dataclass(frozen=True)
class PatchMetric:
    """What patching measures at the last position: `logit_diff` (answer - wrong), `logit` (the answer's) or
    `loss` (-log p(answer), lower is better)."""

    kind: str
    answer: int
    wrong: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {self.kind!r}")
        if self.kind == "logit_diff" and self.wrong is None:
            raise ValueError("metric logit_diff needs a wrong answer (--wrong or --wrong-id)")

    @property
    def higher_is_better(self) -> bool:
        return self.kind != "loss"

    def __call__(self, logits: Tensor) -> Tensor:
        """(N, L, V) -> (N,)."""
        if self.kind == "logit_diff":
            return logit_difference(logits, self.answer, self.wrong)
        if self.kind == "logit":
            return logits[:, -1, self.answer]
        return -F.log_softmax(logits[:, -1].to(torch.promote_types(logits.dtype, torch.float32)), -1)[:, self.answer]


def gap_warning(metric: PatchMetric, clean: float, corrupt: float) -> str | None:
    """One line when the clean-corrupt gap cannot carry a recovery: the wrong sign, or under SMALL_GAP."""
    gap = clean - corrupt if metric.higher_is_better else corrupt - clean
    what = {"logit_diff": "logit difference", "logit": "answer's logit", "loss": "loss"}[metric.kind]
    values = f"clean {clean:.3f}, corrupt {corrupt:.3f}"
    if gap <= 0:
        better = "higher" if metric.higher_is_better else "lower"
        return (
            f"warning: the corrupted prompt's {what} is not worse than the clean one's ({values}; {better} "
            "is the answer's side): every recovery is meaningless; pick a corrupted prompt that leaves the answer"
        )
    if gap < SMALL_GAP:
        still = "; the corrupted prompt still prefers the answer" if metric.kind == "logit_diff" and corrupt > 0 else ""
        return (
            f"warning: the clean-corrupt gap in {what} is only {gap:.3f} ({values}{still}): recoveries divide "
            f"by it and can read past 1 or below 0; pick a corrupted prompt that flips the answer"
        )
    return None


@dataclass
class PatchTable:
    """values[l][c]: the normalised recovery when the clean activation of layer l's point is restored at column c
    (a position, or a head at every position). `ld_clean` / `ld_corrupt`: the metric of the two runs (the logit
    difference unless `metric` says otherwise)."""

    ld_clean: float
    ld_corrupt: float
    values: list[list[float]]
    points: list[str]
    kind: str = "resid_pre"
    metric: str = "logit_diff"
    warning: str | None = None
    columns: str = field(init=False)

    def __post_init__(self) -> None:
        words = self.kind.split()  # "z", "attribution z", "path L2H1 v"...
        self.columns = "head" if words[0] == "path" or words[-1] in HEAD_KINDS else "position"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metric": self.metric,
            "columns": self.columns,
            "ld_clean": self.ld_clean,
            "ld_corrupt": self.ld_corrupt,
            "warning": self.warning,
            "points": self.points,
            "recovery": self.values,
        }


def restore_positions(clean: Tensor):
    """A hook for a batch of L copies of the corrupted run: row t gets the clean stream (L, E) at position t."""

    def hook(resid: Tensor, _: str) -> Tensor:  # (L, L, E): one row per patched position
        rows = torch.arange(resid.shape[0], device=resid.device)
        resid = resid.clone()
        resid[rows, rows] = clean[rows]
        return resid

    return hook


def restore_heads(clean: Tensor, head_axis: int):
    """A hook for a batch of H copies of the corrupted run: row h gets head h of `clean` (one row's activation,
    the head on `head_axis` of the batched value: 2 for z (N, L, H, D), 1 for a pattern (N, H, Lq, Lk))."""

    def hook(value: Tensor, _: str) -> Tensor:
        rows = torch.arange(value.shape[0], device=value.device)
        value = value.clone()
        if head_axis == 2:
            value[rows, :, rows] = clean[:, rows].transpose(0, 1)  # clean (L, H, D) -> per row h: (L, D)
        else:
            value[rows, rows] = clean[rows]  # clean (H, Lq, Lk)
        return value

    return hook


def kind_points(model, kind: str) -> list[str]:
    """Each layer's point for `kind`, refused in one line when the model has none (an attention-only model's MLP)."""
    if kind not in POINTS:
        raise ValueError(f"kind must be one of {', '.join(POINTS)}, not {kind!r}")
    points = layer_points(model.config, POINTS[kind])
    if points[0] not in set(point_names(model.config)):
        raise ValueError(f"kind: this model has no {POINTS[kind]} (ffn {model.config.ffn!r})")
    return points


def measured(
    model, metric: PatchMetric, clean_ids: Tensor, corrupt_ids: Tensor, sources: list[Tensor | None], names: list[str]
) -> tuple[float, float, Any]:
    """(metric clean, metric corrupt, the clean run's cache at `names`); equal metrics refused in one line."""
    if clean_ids.shape != corrupt_ids.shape:
        raise ValueError(
            f"corrupt: the clean and corrupted prompts must be as long as each other "
            f"({clean_ids.shape[-1]} and {corrupt_ids.shape[-1]} tokens)"
        )
    clean_logits, cache = run_with_cache(model, *stream_inputs(clean_ids[None], sources[0]), names=names)
    clean = float(metric(clean_logits)[0])
    corrupt = float(metric(model(*stream_inputs(corrupt_ids[None], sources[1])))[0])
    if abs(clean - corrupt) < 1e-6:
        what = "logit difference" if metric.kind == "logit_diff" else metric.kind
        raise ValueError(
            f"corrupt: the clean and corrupted prompts give the same {what} ({clean:.4g}); nothing is left to restore"
        )
    return clean, corrupt, cache


@torch.no_grad()
def activation_patching(
    model,
    clean_ids: Tensor,
    corrupt_ids: Tensor,
    metric: PatchMetric,
    kind: str = "resid_pre",
    on_step: Callable[[int, int], None] | None = None,
    clean_src: Tensor | None = None,
    corrupt_src: Tensor | None = None,
) -> PatchTable:
    """clean_ids, corrupt_ids (L,) of one length -> the table of recovered metric for `kind`'s point of every layer:
    layers x positions (resid_pre/mid/post, attn_out, mlp_out) or layers x heads (z, pattern: every position).

    One pass per layer: the corrupted prompt repeated once per column, row c patched at column c. `on_step(done,
    total)` after each layer (it may raise to stop). An encoder-decoder's runs read their sources `clean_src`,
    `corrupt_src` (S,) (any lengths); the patched stream is the decoder's."""
    require_stream(model.config, "patch")
    if (clean_src is None or corrupt_src is None) != (model.config.family != "encoder-decoder"):
        raise ValueError("patch: clean_src and corrupt_src (the sources) are read by an encoder-decoder, and only it")
    points = kind_points(model, kind)
    sources = [None if s is None else s[None] for s in (clean_src, corrupt_src)]  # (1, S) each
    m_clean, m_corrupt, cache = measured(model, metric, clean_ids, corrupt_ids, sources, points)
    columns = model.config.heads if kind in HEAD_KINDS else len(corrupt_ids)
    batch = corrupt_ids.expand(columns, -1)  # (C, L)
    values = []
    for point in points:
        saved = cache[point][0]
        hook = restore_heads(saved, 2 if kind == "z" else 1) if kind in HEAD_KINDS else restore_positions(saved)
        patched = metric(run_with_hooks(model, *stream_inputs(batch, sources[1]), hooks=[(point, hook)]))  # (C,)
        values.append(((patched - m_corrupt) / (m_clean - m_corrupt)).tolist())
        if on_step is not None:
            on_step(len(values), len(points))
    return PatchTable(m_clean, m_corrupt, values, points, kind, metric.kind, gap_warning(metric, m_clean, m_corrupt))


def patch_residual(
    model,
    clean_ids: Tensor,
    corrupt_ids: Tensor,
    answer: int,
    wrong: int,
    on_step: Callable[[int, int], None] | None = None,
    clean_src: Tensor | None = None,
    corrupt_src: Tensor | None = None,
) -> PatchTable:
    """The layers x positions table of recovered logit difference when the clean `hook_resid_pre` is restored."""
    return activation_patching(
        model,
        clean_ids,
        corrupt_ids,
        PatchMetric("logit_diff", answer, wrong),
        "resid_pre",
        on_step,
        clean_src,
        corrupt_src,
    )
