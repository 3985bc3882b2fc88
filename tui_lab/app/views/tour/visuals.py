"""The picture on each tour page: widgets built from `Pictures`, every grid in the shared Heatmap.

A page's visual is rebuilt when the page is shown (the data is computed once). Grids that share a page
sit side by side, each under a one-line caption; the decoding page reveals one row per token on a timer.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Label, Static

from tui_lab.app.grids import GridSpec
from tui_lab.app.views.tour.pictures import DecodeRow
from tui_lab.app.widgets.block_diagram import BlockDiagram
from tui_lab.app.widgets.heatmap import Heatmap, QuietHeatmap
from tui_lab.config import ModelConfig

REVEAL_S = 0.5  # seconds between decoding steps on the KV-cache page


class GridPanel(Vertical):
    """A caption over one heatmap, the grid's cursor placed where the page's text points."""

    DEFAULT_CSS = """
    GridPanel { width: 1fr; height: 1fr; }
    GridPanel > Label { width: 100%; height: 1; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, grid: GridSpec, **kwargs) -> None:
        super().__init__(**kwargs)
        self.grid = grid

    def compose(self) -> ComposeResult:
        yield Label(self.grid.title)
        yield QuietHeatmap()

    def on_mount(self) -> None:
        self.show(self.grid)

    def show(self, grid: GridSpec) -> None:
        self.grid = grid
        heatmap = self.query_one(Heatmap)
        heatmap.cursor = grid.cursor  # set_grid keeps it (clamped): the cell the text talks about
        heatmap.set_grid(grid.values, grid.rows, grid.cols, lo=grid.lo, hi=grid.hi, mask=grid.mask, axes=grid.axes,
                         row_notes=grid.row_notes)


def side_by_side(*panels: Widget, stack: bool = False) -> Horizontal:
    """`stack`: on a wide and tall page the panels go one above the other (TourView's "tall"), each the full
    width, so words as column labels are whole where two side by side cut them (issue 36 item 20)."""
    return Horizontal(*panels, classes="tour-row tour-stack" if stack else "tour-row")


class NormDiagrams(VerticalScroll):
    """The block diagram widget twice: the 2017 toy's post-LN layer beside the English toy's pre-LN block."""

    def __init__(self, post: ModelConfig, pre: ModelConfig) -> None:
        super().__init__(classes="tour-diagrams")
        self.post, self.pre = post, pre

    def compose(self) -> ComposeResult:
        with Horizontal(classes="tour-row"):
            for title, config in (("2017 · post-LN", self.post), ("GPT-2 · pre-LN", self.pre)):
                with Vertical(classes="tour-diagram"):
                    yield Label(title, classes="tour-caption")
                    yield BlockDiagram(id=f"tour-{config.norm_position}")

    def on_mount(self) -> None:
        self.query_one("#tour-post", BlockDiagram).show(self.post)
        self.query_one("#tour-pre", BlockDiagram).show(self.pre)


class DecodeSteps(Horizontal):
    """Greedy decoding one token per row: what was fed, the cache's length, what came out; the grid grows."""

    def __init__(self, rows: list[DecodeRow], grid: GridSpec, bytes_per_token: int) -> None:
        super().__init__(classes="tour-row")
        self.rows, self.grid, self.bytes_per_token = rows, grid, bytes_per_token
        self.shown = 0

    def compose(self) -> ComposeResult:
        yield Static("", id="tour-decode-log")
        yield GridPanel(self._partial(1), id="tour-decode-grid")

    def on_mount(self) -> None:
        self.shown = 1
        self._draw()
        self.set_interval(REVEAL_S, self._reveal, name="tour-decode")

    def _partial(self, n: int) -> GridSpec:
        g = self.grid
        return GridSpec(g.title, g.values[:n], g.rows[:n], g.cols, g.mask, g.lo, g.hi, g.axes, g.row_notes[:n],
                    (n - 1, 0))

    def _reveal(self) -> None:
        if self.shown < len(self.rows):
            self.shown += 1
            self._draw()

    @property
    def done(self) -> bool:
        return self.shown == len(self.rows)

    def _draw(self) -> None:
        lines = ["   fed     cache → new   p", *(
            f"{i + 1:>2} {r.fed[:8]:<8}{r.cache:>4} → {r.new[:7]:<7} {r.prob:.2f}"
            for i, r in enumerate(self.rows[:self.shown]))]
        last = self.rows[self.shown - 1]
        lines += ["", f"cache: {last.cache} positions,", f"{last.cache * self.bytes_per_token:,} bytes"]
        self.query_one("#tour-decode-log", Static).update("\n".join(lines))
        self.query_one("#tour-decode-grid", GridPanel).show(self._partial(self.shown))


def counts_table(rows: list[tuple[str, str, str]]) -> Static:
    """The comparison table as aligned text: at 80 columns every count is whole."""
    first = max(len(r[0]) for r in rows) + 2
    widths = [max(len(r[i]) for r in rows) + 3 for i in (1, 2)]
    lines = []
    for i, (name, a, b) in enumerate(rows):
        lines.append(f"{name:<{first}}{a:>{widths[0]}}{b:>{widths[1]}}")
        if i == 0:
            lines.append("─" * (first + sum(widths)))
    return Static("\n".join(lines), id="tour-table")
