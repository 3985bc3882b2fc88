"""widgets/table_fill: a DataTable filled with its widths given shows every cell whole from its first frame, for
any cells (random ones over seeds), refilled as a run's results grow; the table's own measuring waited for idle
and a frame drawn before it cut cells to the headers' widths (the long tier's English 160x48 walk)."""

from __future__ import annotations

import random

from app_support import screen_lines
from screen_rules import given_widths, table_cells
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tui_lab.app.widgets.table_fill import column_widths, fill_table

LABELS = ("run", "val\nloss", "tok/s")


def _rows(rng: random.Random, n: int) -> list[tuple]:
    word = "".join(rng.choice("abcdefghij_") for _ in range(rng.randint(1, 18)))
    return [(f"{word}{i}", f"{rng.uniform(0, 10):.{rng.randint(1, 6)}g}", rng.randint(1, 10**rng.randint(1, 7)))
            for i in range(n)]


class Filled(App):
    def compose(self) -> ComposeResult:
        yield DataTable()


def test_widths_are_the_widest_header_line_or_cell():
    assert column_widths(LABELS, [("sinusoidal_halves", "3.121", 12345678)]) == [17, 5, 8]
    assert column_widths(LABELS, []) == [3, 4, 5]


async def test_every_cell_whole_from_the_first_frame_over_seeds():
    app = Filled()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(DataTable)
        for seed in range(12):
            rng = random.Random(seed)
            rows = _rows(rng, rng.randint(1, 6))
            fill_table(table, LABELS, rows)
            assert given_widths(table) == column_widths(LABELS, rows), seed  # before any idle: given, not measured
            await pilot.pause()
            assert table_cells(app, screen_lines(app)) == [], seed


def test_a_folded_cell_reads_back_whole_in_lines_that_fit():
    """fold_cell over seeded paths and names: every line fits, the lines read back the value, and a path breaks
    after a slash wherever one falls in a line's last two thirds."""
    from tui_lab.app.widgets.table_fill import fold_cell

    rng = random.Random(7)
    for _ in range(300):
        parts = ["".join(rng.choice("abcdef0123_-.") for _ in range(rng.randint(1, 14))) for _ in range(8)]
        text, width = rng.choice(["/", ""]) + rng.choice(["/", "_", " "]).join(parts), rng.randint(8, 40)
        lines = fold_cell(text, width).split("\n")
        assert "".join(lines) == text and all(len(line) <= width for line in lines), (text, width, lines)
        for line in lines[:-1]:
            slash = line.rfind("/")
            assert line.endswith("/") or slash < width // 3 or "/" not in text, (text, width, lines)
