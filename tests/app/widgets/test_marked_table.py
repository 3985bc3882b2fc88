"""MarkedTable on a real screen, over seeded tables and widths: each line shows a cell whole or not at all, a line
with hidden columns carries the mark of their side (`›` right, `‹` left), a table that fits has no mark, and ←/→
bring every column into sight whole. (Experiments' tokens table at 80x24 showed a sixth column cut with its
scrollbar, the only mark, below the pane: the long tier's translator walk.)"""

from __future__ import annotations

import random

from app_support import screen_lines
from textual.app import App, ComposeResult

from tui_lab.app.widgets.marked_table import MORE_LEFT, MORE_RIGHT, MarkedTable
from tui_lab.app.widgets.table_fill import fill_table

WORDS = ["token", "position", "shuffled to", "no positions", "learned", "causal no positions", "seed", "val loss"]


def _table(rng: random.Random) -> tuple[list[str], list[list[str]]]:
    labels = [rng.choice(WORDS).replace(" ", "\n") + str(i) for i in range(rng.randint(2, 8))]
    cells = [lambda: f"{rng.uniform(-1, 1) * 10 ** rng.randint(-9, 6):.{rng.randint(1, 6)}g}",
             lambda: rng.choice(["I", "because", "sinusoidal_halves", "me"]), lambda: str(rng.randint(0, 99))]
    kinds = [rng.choice(cells) for _ in labels]
    return labels, [[kind() for kind in kinds] for _ in range(rng.randint(2, 6))]


class OneTable(App):
    CSS = "MarkedTable { width: 40; }"

    def compose(self) -> ComposeResult:
        yield MarkedTable(cursor_type="row", zebra_stripes=True)


def _lines(app: App, table: MarkedTable) -> list[str]:
    r = table.region
    return [line[r.x:r.right] for line in screen_lines(app)[r.y:r.bottom]]


def _room(table: MarkedTable) -> int:
    """The cells a scrollable column has beside the fixed ones."""
    fixed = table.ordered_columns[:table.fixed_columns]
    return table.size.width - sum(column.get_render_width(table) for column in fixed)


def _check_state(table: MarkedTable, rows: list[list[str]], lines: list[str], seen: set) -> None:
    body = lines[table.header_height:table.header_height + len(rows)]
    wide = {i for i, column in enumerate(table.ordered_columns) if column.get_render_width(table) > _room(table)}
    for row, line in zip(rows, body, strict=True):
        words = line.replace(MORE_LEFT, " ").replace(MORE_RIGHT, " ").split()
        hidden = [cell for cell in row if cell not in words]
        for i, cell in enumerate(row):  # a cell shows whole, or none of it (a column wider than the room: cut, marked)
            edges = words[-1:] + words[:1]
            assert i in wide or cell in words or not any(
                w != cell and (cell.startswith(w) or cell.endswith(w)) and len(w) > 1 for w in edges), (cell, line)
        if hidden:
            assert line.rstrip().endswith(MORE_RIGHT) or MORE_LEFT in line, (hidden, line)
        seen.update((i, cell) for i, cell in enumerate(row) if cell in words)
    more_left, more_right = table.hidden_sides()
    drawn = lines[:table.header_height + len(rows)]  # the header's lines and the rows' (not the scrollbar)
    assert all(line.rstrip().endswith(MORE_RIGHT) == more_right for line in drawn), lines
    assert all((MORE_LEFT in line) == more_left for line in drawn), lines
    under = lines[len(drawn):]  # a table taller than its rows: the blank under them carries no mark
    assert not any(MORE_RIGHT in line or MORE_LEFT in line for line in under), lines


async def test_seeded_tables_show_whole_columns_and_mark_the_hidden_side():
    app = OneTable()
    async with app.run_test(size=(90, 20)) as pilot:
        table = app.query_one(MarkedTable)
        table.focus()
        for seed in range(10):
            rng = random.Random(seed)
            labels, rows = _table(rng)
            table.fixed_columns = rng.choice([0, 1])
            table.styles.width = rng.randint(20, 80)
            table.styles.height = rng.choice(["auto", 14])
            fill_table(table, labels, rows)
            table.scroll_to(x=0, animate=False)
            await pilot.pause()
            await pilot.pause()  # a new width: the frame after the layout's (the first drew at the old width)
            fits = table.virtual_size.width <= table.size.width
            seen: set = set()
            for key in ["right"] * (len(labels) + 1) + ["left"] * (len(labels) + 1):
                lines = _lines(app, table)
                _check_state(table, rows, lines, seen)
                assert not fits or not any(MORE_RIGHT in line or MORE_LEFT in line for line in lines), lines
                await pilot.press(key)
                await pilot.pause()
            assert round(table.scroll_x) == 0, seed
            if max(column.get_render_width(table) for column in table.ordered_columns) <= _room(table):
                assert seen >= {(i, cell) for row in rows for i, cell in enumerate(row)}, (seed, labels, rows)

