"""The grid's scrolling body: one terminal line of cells, full (a row per line or more) or dense (two rows per
line). Pure drawing from a `grid_layout.Layout` and the data; the widget (heatmap.py) caches the lines and
throws them away when the data, the cursor, the size or the theme change."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.strip import Strip

from tui_lab.app.widgets.grid_cells import CURSOR, dense_cell, full_cell, level, palette
from tui_lab.app.widgets.grid_layout import Layout

Masked = Callable[[int, int], bool]  # (row, col) -> True when the cell may not attend


def cell_level(values: Sequence[Sequence[float]], masked: Masked, scale: tuple[float, float], row: int,
               col: int) -> int | None:
    """The colour level of a cell; None when it has none (no data, masked, past the last row)."""
    if row >= len(values) or masked(row, col):
        return None
    return level(values[row][col], *scale)


def cells_line(lay: Layout, line: int, values: Sequence[Sequence[float]], masked: Masked,
               scale: tuple[float, float], cursor: tuple[int, int], numbers: bool) -> Strip:
    """The cells of grid line `line`, unscrolled: `lay.grid_width` cells wide."""
    row = lay.row_of_line(line)
    if lay.dense:
        colours = palette()

        def colour(r: int, col: int):
            lvl = cell_level(values, masked, scale, r, col)
            return CURSOR if (r, col) == cursor else None if lvl is None else colours[lvl]

        segments = [dense_cell(colour(row, col), colour(row + 1, col), lay.cell_w) for col in range(lay.cols)]
    else:
        text_line = lay.label_line(row) == line
        segments = [full_cell(values[row][col], cell_level(values, masked, scale, row, col), masked(row, col),
                              (row, col) == cursor, text_line, lay.cell_w, numbers)
                    for col in range(lay.cols)]
    return Strip(segments, lay.grid_width).simplify()
