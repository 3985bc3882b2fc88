"""Filling a DataTable with its columns' widths given, not measured by the table.

A DataTable measures the rows added to it when it is next idle; a frame drawn before that (a busy app, results
redrawn as a run goes on) kept the columns as wide as their headers, and the cells showed cut with no mark:
"sinusoida" for sinusoidal_halves, "3.12" for 3.121 (the long tier's English 160x48 walk, Experiments' sweep).
A cell of several lines ("\\n") makes its row as tall; `folded` breaks a column wider than the table's room (a
path) into such lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual.widgets import DataTable

# where a long value breaks: a path at its slashes, else (no slash in the line's last two thirds) a name at its
# underscores, hyphens, dots or spaces
SLASHES, SEPARATORS = "/\\", "_-. "
LEAST_FOLD = 8  # a column narrower than this is not folded (it scrolls sideways, marked)


def _cell_width(value: Any) -> int:
    return max(cell_len(line) for line in str(value).split("\n"))


def column_widths(labels: Sequence[Any], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Each column's width: its widest header line or cell line (as the cell's text)."""
    return [max([_cell_width(label)] + [_cell_width(row[i]) for row in rows if i < len(row)])
            for i, label in enumerate(labels)]


def fold_cell(text: str, width: int) -> str:
    """`text` in lines of at most `width` cells, each broken after the last slash that fits (a path), else after
    another separator, else at the width."""
    lines = []
    while cell_len(text) > width:
        head = text[:width]
        cut = max(head.rfind(slash) for slash in SLASHES) + 1
        if cut <= width // 3:
            cut = max(cut, max(head.rfind(separator) for separator in SEPARATORS) + 1) or width
        lines.append(text[:cut])
        text = text[cut:]
    return "\n".join([*lines, text])


def folded(labels: Sequence[Any], rows: Sequence[Sequence[Any]], room: int, padding: int = 1) -> list[list[Any]]:
    """`rows` with the cells of each column wider than `room` beside the first column folded to fit (a results
    table's checkpoint path at 80 columns ran past the pane's edge); `room` 0 (not laid out) folds nothing."""
    widths = column_widths(labels, rows)
    out = [list(row) for row in rows]
    for i, width in enumerate(widths):
        limit = room - 2 * padding - (widths[0] + 2 * padding if i else 0)
        if room and width > limit >= LEAST_FOLD:
            for row in out:
                if i < len(row) and isinstance(row[i], str):
                    row[i] = fold_cell(row[i], limit)
    return out


def fill_table(table: DataTable, labels: Sequence[Any], rows: Sequence[Sequence[Any]],
               keys: Sequence[str | None] | None = None) -> None:
    """`table` cleared and given `labels` as its columns (keyed by `keys` when given), each as wide as
    `column_widths` says, and `rows`, each as tall as its cell of most lines."""
    table.clear(columns=True)
    widths = column_widths(labels, rows)
    for label, width, key in zip(labels, widths, keys or [None] * len(labels), strict=True):
        table.add_column(label, width=width, key=key)
    for row in rows:
        table.add_row(*row, height=max([str(cell).count("\n") + 1 for cell in row], default=1))
