"""Training runs kept while the app runs: their curves, labels by config differences, and CSV export.

Pure Python (no torch, no textual): the Train view feeds events in, the loss plot reads downsampled
curves out, and the export writes every run's history to one CSV file.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_PLOT_POINTS = 200  # plotext redraws every point on each refresh: ~30 ms at 100 points, ~130 ms at 10k
LABEL_FIELDS = 3  # at most this many differing fields in a run's label


@dataclass
class Run:
    """One training run: its configs (as dicts) and what it reported, step by step."""

    number: int
    model: dict[str, Any]
    train: dict[str, Any]
    train_loss: list[tuple[int, float]] = field(default_factory=list)
    val_loss: list[tuple[int, float]] = field(default_factory=list)
    lr: list[tuple[int, float]] = field(default_factory=list)
    tokens_per_s: list[float] = field(default_factory=list)
    teacher_forcing: list[tuple[int, float]] = field(default_factory=list)  # seq2seq: p_i (scheduled sampling)
    status: str = "running"
    label: str = ""

    def settings(self) -> dict[str, Any]:
        """Model and training fields in one flat dict, for telling runs apart."""
        task = self.train.get("task") or (Path(self.train["data"]).name if self.train.get("data") else "corpus")
        out = {k: v for k, v in self.model.items() if k not in ("name", "source")}
        out |= {k: v for k, v in self.train.items() if k not in ("out", "task", "data")}
        return out | {"task": task}


def downsample(points: list[tuple[int, float]], limit: int = MAX_PLOT_POINTS) -> list[tuple[int, float]]:
    """At most `limit` points: the mean of equal buckets, the last point kept so the curve ends where the run is."""
    if len(points) <= limit:
        return list(points)
    size = len(points) / (limit - 1)
    out = []
    for i in range(limit - 1):
        bucket = points[int(i * size): max(int((i + 1) * size), int(i * size) + 1)]
        out.append((bucket[len(bucket) // 2][0], sum(v for _, v in bucket) / len(bucket)))
    out.append(points[-1])
    return out


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_short(v) for v in value)
    return str(value)


def label_runs(runs: list[Run]) -> None:
    """Label each run by the fields where the runs differ ("#2 norm_position=post lr=0.001")."""
    settings = [r.settings() for r in runs]
    keys = sorted({k for s in settings for k in s})
    differing = [k for k in keys if len({_short(s.get(k)) for s in settings}) > 1]
    for run, s in zip(runs, settings, strict=True):
        parts = [f"{k}={_short(s.get(k))}" for k in differing[:LABEL_FIELDS]]
        extra = f" +{len(differing) - LABEL_FIELDS}" if len(differing) > LABEL_FIELDS else ""
        run.label = f"#{run.number} " + (" ".join(parts) + extra if parts else s["task"])


class RunStore:
    """Every run of this app session, newest last."""

    def __init__(self) -> None:
        self.runs: list[Run] = []

    @property
    def current(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    def start(self, model: dict[str, Any], train: dict[str, Any]) -> Run:
        run = Run(len(self.runs) + 1, dict(model), dict(train))
        self.runs.append(run)
        label_runs(self.runs)
        return run

    def export_csv(self, path: str | Path) -> Path:
        """One row per (run, step): train loss, val loss where evaluated, learning rate."""
        path = Path(path)
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["run", "label", "step", "train_loss", "val_loss", "lr"])
            for run in self.runs:
                for step, train, val, lr in _rows(run):
                    writer.writerow([run.number, run.label, step, train, val, lr])
        return path


def _rows(run: Run) -> list[tuple[int, Any, Any, Any]]:
    val, lr = dict(run.val_loss), dict(run.lr)
    steps = sorted({s for s, _ in run.train_loss} | set(val))
    train = dict(run.train_loss)
    return [(s, _cell(train.get(s)), _cell(val.get(s)), _cell(lr.get(s))) for s in steps]


def _cell(value: float | None) -> str:
    return "" if value is None else (repr(value) if math.isfinite(value) else str(value))
