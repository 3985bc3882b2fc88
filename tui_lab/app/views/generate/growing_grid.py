"""The Generate view's attention grid: one row per new token over the whole context, growing as the KV cache does.

A widget the view drives: `begin` when a stream starts (its context, and whether rows are cross-attention over a
source or a copy model's copy distribution), `add` per token. A row is the new token's attention over the context
so far (last layer, mean of heads); keys a row could not see (not generated yet, or slid out of a learned-position
window) are drawn masked.
"""

from __future__ import annotations

import math
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical

from tui_lab.app.widgets.heatmap import Heatmap, QuietHeatmap

TITLE = "attention of each new token over the context"  # the grid keeps every line
# The grid's own keys, named under it once it has rows: in the footer they pushed "q quit" off at 80 columns
# (the crawler's Generate '5 tab tab', the grid focused).
KEYS = "z dense/full · # numbers"


class GrowingGrid(Vertical):
    """`#gen-att` in its box; the box's title says what a row is."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = TITLE
        self.context: list[str] = []  # the columns: prompt (or source), then each generated token
        self.rows: list[tuple[int, list[float]]] = []  # (where its keys end in the context, the row)
        self.row_labels: list[str] = []
        self.cross = False  # rows over the source (an encoder-decoder): the context does not grow
        self.translating = False

    def compose(self) -> ComposeResult:
        yield QuietHeatmap(id="gen-att", numbered=True)  # its box names z and #

    def clear(self) -> None:
        """A new job: no rows yet (the grid keeps showing the last one's until the new stream starts)."""
        self.rows, self.row_labels = [], []
        self.border_subtitle = ""

    def begin(self, context: list[str], cross: bool, copy: bool, translating: bool) -> None:
        self.context, self.cross, self.translating = list(context), cross, translating
        what = "cross-attention: new tokens x source" if cross else \
            "attention: new tokens x context (a row per step, like the KV cache)"
        if cross and translating:
            what = "cross-attention: target x source"
        if copy:
            what = "copy: (1-p_gen) x attention over the source; row: token p_gen"
        self.border_title = what

    def add(self, label: str, row: list[float] | None, p_gen: float | None) -> None:
        """A new token: its row (None: no attention came with it), and a column when the context grows."""
        if row is not None:
            self.rows.append((len(self.context), row))
            self.row_labels.append(row_label(label, p_gen))
        if not self.cross:
            self.context.append(label)
        if row is not None:
            self._draw()

    def _draw(self) -> None:
        """One row per new token over the whole context; a row's keys end where the context ended when it
        was computed, and a sliding window (learned positions) starts them later."""
        width = len(self.context)
        grid, mask = [], []
        for end, row in self.rows:
            start = max(0, end - len(row))
            grid.append([math.nan] * start + row[len(row) - (end - start):] + [math.nan] * (width - end))
            mask.append([not start <= c < end for c in range(width)])
        masked = mask if any(any(m) for m in mask) else None
        axes = ("translation", "source") if self.cross and self.translating else ("new token", "context")
        self.border_subtitle = KEYS
        self.query_one("#gen-att", Heatmap).set_grid(grid, self.row_labels, self.context, lo=0.0, mask=masked,
                                                     axes=axes)


def row_label(label: str, p_gen: float | None) -> str:
    """A grid row's label; a copy model's says how much of the token was generated (p_gen) vs copied."""
    return label if p_gen is None else f"{label} {p_gen:.2f}"
