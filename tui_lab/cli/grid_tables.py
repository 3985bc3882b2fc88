"""Number grids for the mechanism commands that stay whole at 80 columns: the columns are cut into as many
tables as the width needs (never a number cut or wrapped), each repeating the row labels."""

from __future__ import annotations

from rich.table import Table

WIDTH = 80  # what a terminal (or a pipe, rich's default) gives at the least


def _width(texts: list[str]) -> int:
    """A column's cells and rules: its longest line, a space each side, one border."""
    return max(len(line) for text in texts for line in text.splitlines() or [""]) + 3


def grid_tables(
    title: str, corner: str, rows: list[str], columns: list[str], cells: list[list[str]], width: int = WIDTH
) -> list[Table]:
    """Tables of `cells[r][c]` (rows x columns, as text), the columns in chunks that fit `width` with the row
    labels beside each chunk; the title on the first, `(cont.)` on the others."""
    label = _width([corner, *rows])
    chunks, start = [], 0
    while start < len(columns) or not chunks:
        end, used = start, label + 1
        while end < len(columns) and (end == start or used + _width([columns[end], *(r[end] for r in cells)]) <= width):
            used += _width([columns[end], *(r[end] for r in cells)])
            end += 1
        chunks.append((start, end))
        start = end
    tables = []
    for i, (start, end) in enumerate(chunks):
        table = Table(title=title if i == 0 else "(cont.)")
        table.add_column(corner, no_wrap=True)
        for name in columns[start:end]:
            table.add_column(name, justify="right", no_wrap=True)
        for name, row in zip(rows, cells, strict=True):
            table.add_row(name, *row[start:end])
        tables.append(table)
    return tables
