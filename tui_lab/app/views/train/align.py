"""The Train view's alignment panel: the held-out example's cross-attention forming, this run beside the last.

Seed 002 (section 4, Tips 2): guided attention pulls cross-attention toward a monotonic diagonal. To see what
it does, a person trains the same task twice (guidance 0, then e.g. 1): the previous run's last grid stays
on the right while this run's forms on the left. On copy the guided run turns diagonal sooner; on numbers-de,
whose German puts units before tens ("twenty one" -> "einundzwanzig"), the prior fights the task.
A widget of its own (`#tr-align-box`): the view tells it when a run starts (`start`) and hands it each grid
the run sends (`show`); it keeps the two grids it shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from tui_lab.app.runs import Run
from tui_lab.app.widgets.heatmap import Heatmap, QuietHeatmap


@dataclass
class Grid:
    run: int
    label: str
    task: str
    step: int
    values: list[list[float]]
    rows: list[str]
    cols: list[str]

    def title(self, now: bool) -> str:
        when = f"step {self.step}" if now else f"last, step {self.step}"
        return f"run #{self.run} {self.label} ({self.task}, {when})"


def method_label(train: dict, model: dict | None = None) -> str:
    """What sets a run's alignment apart: its guided-attention weight and scheduled sampling, after its
    cross_attention kind when that is a guided one (location-aware, monotonic)."""
    kind = (model or {}).get("cross_attention", "softmax")
    parts = ([] if kind == "softmax" else [kind]) + [f"guided {train.get('guided_attention') or 0:g}"]
    if train.get("scheduled_sampling", "none") != "none":
        parts.append(f"sampling {train['scheduled_sampling']}")
    return ", ".join(parts)


GRID_KEYS = "z dense · # numbers"


class AlignmentPanel(Vertical):
    """Hidden until a run of a task starts; then this run's grid on the left, the last run's on the right."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._now: Grid | None = None
        self._before: Grid | None = None

    def compose(self) -> ComposeResult:
        yield Static("cross-attention of a held-out example (target x source, mean of heads, last layer)",
                     id="tr-align-title")
        with Horizontal(id="tr-align-pair"):
            with Vertical(id="tr-align-now"):
                yield Static("", id="tr-align-now-title", classes="tr-align-sub")
                # z and # named on the legend where it has room, not on the footer: at 80x24 they pushed the
                # Train view's keys and q quit off it (the long tier's translator 80x24 walk at 74677e7)
                yield QuietHeatmap(id="tr-align", keys_note=GRID_KEYS)
            with Vertical(id="tr-align-prev"):
                yield Static("", id="tr-align-prev-title", classes="tr-align-sub")
                yield QuietHeatmap(id="tr-align-before", keys_note=GRID_KEYS)

    def on_mount(self) -> None:
        self.add_class("-none")  # until a run of a task starts

    def start(self, task: str | None) -> None:
        """A new run: the last run's final grid moves to the right (when it was a task), the left clears."""
        # A class, not `display`: an inline display showed the panel beside the one a small screen shows (80x24:
        # `l` put "learning r…" and the alignment side by side, each too narrow for its numbers)
        self.set_class(task is None, "-none")
        if self._now is not None:
            self._before, self._now = self._now, None
        before = self._before
        self.query_one("#tr-align-prev").display = before is not None
        self.set_class(before is not None, "-pair")  # two grids side by side: two panels' width (the CSS)
        if before is not None:
            self.query_one("#tr-align-before", Heatmap).set_grid(before.values, before.rows, before.cols, lo=0.0,
                                                                 hi=1.0)
            self.query_one("#tr-align-prev-title", Static).update(before.title(now=False))
        self.query_one("#tr-align-now-title", Static).update("this run: the grid appears after its first step")

    def show(self, run: Run, step: int, grid: list[list[float]], rows: list[str], cols: list[str]) -> None:
        """The grid `run` sent at `step` (target rows x source columns)."""
        self._now = Grid(run.number, method_label(run.train, run.model), run.train.get("task") or "", step,
                         grid, rows, cols)
        self.query_one("#tr-align", Heatmap).set_grid(grid, rows, cols, lo=0.0, hi=1.0)
        self.query_one("#tr-align-now-title", Static).update(self._now.title(now=True))
