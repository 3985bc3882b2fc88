"""Filling a DataTable with its columns' widths given, not measured by the table.

A DataTable measures the rows added to it when it is next idle; a frame drawn before that (a busy app, results
redrawn as a run goes on) kept the columns as wide as their headers, and the cells showed cut with no mark:
"sinusoida" for sinusoidal_halves, "3.12" for 3.121 (the long tier's English 160x48 walk, Experiments' sweep).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual.widgets import DataTable


def column_widths(labels: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Each column's width: its widest header line or cell (as the cell's text)."""
    return [max([cell_len(line) for line in str(label).split("\n")]
                + [cell_len(str(row[i])) for row in rows if i < len(row)])
            for i, label in enumerate(labels)]


def fill_table(table: DataTable, labels: Sequence[Any], rows: Sequence[Sequence[Any]],
               keys: Sequence[str | None] | None = None) -> None:
    """`table` cleared and given `labels` as its columns (keyed by `keys` when given), each as wide as
    `column_widths` says, and `rows`."""
    table.clear(columns=True)
    widths = column_widths(labels, rows)
    for label, width, key in zip(labels, widths, keys or [None] * len(labels), strict=True):
        table.add_column(label, width=width, key=key)
    table.add_rows(rows)
