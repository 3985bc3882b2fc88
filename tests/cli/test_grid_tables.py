"""The mechanism commands' number grids stay whole at 80 columns: columns cut into tables, never a number."""

from __future__ import annotations

import io

from rich.console import Console

from tui_lab.cli.grid_tables import grid_tables


def _render(tables) -> str:
    out = io.StringIO()
    console = Console(file=out, width=80)
    for table in tables:
        console.print(table)
    return out.getvalue()


def test_twelve_heads_with_two_line_cells_are_whole_at_80_columns():
    rows, columns = ["L0", "L1", "L10"], [f"head {h}" for h in range(12)]
    cells = [[f"{-h / 7 - r:+.4f}\n±{h / 9:.4f}" for h in range(12)] for r in range(3)]
    tables = grid_tables("zero ablation: change in logit", "layer", rows, columns, cells)
    text = _render(tables)
    assert len(tables) == 2 and max(len(line) for line in text.splitlines()) <= 80
    for row in cells:
        for cell in row:
            for part in cell.splitlines():
                assert part in text, part
    assert all(f"head {h} " in text for h in range(12)) and text.count("│ L10 ") == 2  # in both tables


def test_a_narrow_grid_is_one_table():
    tables = grid_tables("t", "layer", ["L0"], ["H0", "H1"], [["0.50", "-0.25"]])
    assert len(tables) == 1 and "-0.25" in _render(tables)
