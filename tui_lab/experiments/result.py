"""What an experiment hands back: scalars, named curves, tables and grids, all plain JSON data.

A face draws it (the CLI prints the scalars and tables, the app plots the curves and grids) and
`export` writes it as one JSON file plus a CSV per figure, in the exports folder.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Curve:
    label: str
    xs: list[float]
    ys: list[float]


@dataclass
class Plot:
    """Curves drawn together on one pair of axes (overlaid)."""

    title: str
    xlabel: str
    ylabel: str
    curves: list[Curve] = field(default_factory=list)

    def add(self, label: str, xs: list[float], ys: list[float]) -> Curve:
        curve = Curve(label, [float(x) for x in xs], [float(y) for y in ys])
        self.curves.append(curve)
        return curve


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)


@dataclass
class Grid:
    """A matrix for a heatmap: values[row][col], with a label per row and column."""

    title: str
    values: list[list[float]]
    row_labels: list[str]
    col_labels: list[str]
    axes: tuple[str, str] = ("row", "column")


@dataclass
class Result:
    experiment: str
    options: dict[str, Any]
    scalars: dict[str, Any] = field(default_factory=dict)
    plots: dict[str, Plot] = field(default_factory=dict)
    tables: dict[str, Table] = field(default_factory=dict)
    grids: dict[str, Grid] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # sentences a person reads with the numbers
    seconds: float = 0.0

    def plot(self, key: str, title: str, xlabel: str, ylabel: str) -> Plot:
        """The plot named `key`, made on first use."""
        return self.plots.setdefault(key, Plot(title, xlabel, ylabel))

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=_plain))

    def export(self, folder: Path | None = None) -> list[Path]:
        """`<experiment>-<time>.json` and one CSV per plot (curve,x,y), table and grid; the paths written."""
        from tui_lab.paths import exports_dir

        folder = Path(folder) if folder is not None else exports_dir()
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{self.experiment}-{time.strftime('%Y%m%d-%H%M%S')}"
        written = [folder / f"{stem}.json"]
        written[0].write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        for key, plot in self.plots.items():
            rows = [[c.label, x, y] for c in plot.curves for x, y in zip(c.xs, c.ys, strict=True)]
            written.append(_csv(folder / f"{stem}-{key}.csv", ["curve", plot.xlabel, plot.ylabel], rows))
        for key, table in self.tables.items():
            written.append(_csv(folder / f"{stem}-{key}.csv", table.columns, table.rows))
        for key, grid in self.grids.items():
            rows = [[label, *row] for label, row in zip(grid.row_labels, grid.values, strict=True)]
            written.append(_csv(folder / f"{stem}-{key}.csv", [grid.axes[0], *grid.col_labels], rows))
        return written


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _plain(value: Any) -> Any:
    """numpy / torch scalars and tuples as plain JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (tuple, set)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")
