"""A grid wider than its pane, its weights written in the cells (`#`), shows whole columns only: the column the
pane's right edge would cut is left blank (the scrollbar says there is more), never "0.4" of "0.47" against the
edge, and the last column's number keeps a blank cell before the edge (issue 36's crawler: "0.05▅▅")."""

from __future__ import annotations

import pytest
from app_support import screen_lines, wait_for
from screen_rules import cut_numbers
from textual.app import App, ComposeResult

from tui_lab.app.widgets.heatmap import Heatmap


class One(App):
    def __init__(self, rows: int, cols: int) -> None:
        super().__init__()
        self.shape = rows, cols

    def compose(self) -> ComposeResult:
        yield Heatmap(id="map")

    def on_mount(self) -> None:
        rows, cols = self.shape
        values = [[(c * rows + r) / (rows * cols) for c in range(cols)] for r in range(rows)]
        self.query_one(Heatmap).set_grid(values, [f"r{r}" for r in range(rows)], [f"c{c}" for c in range(cols)],
                                         dense=False)


@pytest.mark.parametrize("rows", [8, 40])  # 40: a vertical scrollbar takes two columns too
@pytest.mark.parametrize("width", [80, 81, 82, 83, 84])  # every remainder of the view over whole 5-wide cells
async def test_numbers_in_a_scrolled_grid_are_whole_and_clear_of_the_edge(width, rows):
    app = One(rows, 30)
    async with app.run_test(size=(width, 24)) as pilot:
        heatmap = app.query_one(Heatmap)
        heatmap.action_toggle_numbers()
        heatmap.focus()
        await pilot.pause()
        for col in range(30):
            heatmap.move_cursor(col % rows, col)
            await wait_for(pilot, lambda col=col: heatmap.cursor[1] == col)
            await pilot.pause()
            lines = screen_lines(app)
            assert cut_numbers(lines, width) == [], f"cursor on c{col}:\n" + "\n".join(lines)


def test_a_numbered_key_never_ends_on_its_last_column():
    """At the edge (a scrollbar, a border) a key entry's last digit read as a number cut: "4 \\x01▅▅" (the long
    tier's walk over Generate's byte-fallback grid). Every width and label length from a seeded draw."""
    import random

    from tui_lab.app.widgets.grid_layout import KEY_GAP, key_lines

    rng = random.Random(36)
    for _ in range(400):
        labels = ["x" * rng.randint(1, 6) for _ in range(rng.randint(1, 30))]
        width = rng.randint(9, 60)
        for line in key_lines(labels, width):
            used = sum(len(entry) for _, entry in line) + len(KEY_GAP) * (len(line) - 1)
            assert used < width, (labels, width, line)


class Patches(App):
    """A ViT's grid: '[CLS]' then 'row,col' of 14x14 patches, one character a column."""

    def compose(self) -> ComposeResult:
        yield Heatmap(id="map")

    @staticmethod
    def labels() -> list[str]:
        return ["[CLS]"] + [f"{r},{c}" for r in range(14) for c in range(14)]

    def on_mount(self) -> None:
        labels = self.labels()
        values = [[((i * 7 + j) % 11) / 10 for j in range(len(labels))] for i in range(len(labels))]
        self.query_one(Heatmap).set_grid(values, labels, labels, dense=True)


@pytest.mark.parametrize("width", [80, 100])
async def test_one_character_columns_keep_their_labels_off_the_edge_and_every_column_reachable(width):
    """Labels written downwards one character a column: their first characters ("[000...111...444") ran into the
    pane's edge and read as one long number cut there (the long tier's English 80x24 walk, a ViT's sliding-window
    mask), and downwards in four lines "0,10" ended "…" beside "0,9": "0123456789…………". They are written across every
few columns, whole; the column by the edge is left blank, and the cursor still reaches the last column."""
    app = Patches()
    async with app.run_test(size=(width, 24)) as pilot:
        heatmap = app.query_one(Heatmap)
        heatmap.focus()
        await pilot.pause()
        assert heatmap.layout.cell_w == 1 and heatmap.layout.grid_width > width
        for col in (0, 60, 120, 196):
            heatmap.move_cursor(0, col)
            await pilot.pause()
            lines = screen_lines(app)
            assert cut_numbers(lines, width) == [], f"cursor on column {col}:\n" + "\n".join(lines)
            # the labels written across every few columns, each whole: the view's sides leave a cut one out
            header = lines[heatmap.layout.top - 1]
            shown = {label for label in header.split()}
            assert len(shown) >= 4 and shown <= set(Patches.labels()), header
            x = heatmap.layout.gutter + col - heatmap.scroll_offset.x
            assert heatmap.cell_at(x, heatmap.layout.top) == (0, col), (col, heatmap.scroll_offset)


def test_a_header_written_across_shows_each_label_whole_in_any_window():
    """Every window of a tick line (any start, any width, seeded draws): each label in it is whole or left out."""
    import random

    from rich.segment import Segment
    from textual.strip import Strip

    from tui_lab.app.widgets.grid_layout import tick_line
    from tui_lab.app.widgets.grid_lines import window

    rng = random.Random(36)
    for _ in range(300):
        labels = [f"{rng.randint(0, 13)},{rng.randint(0, 13)}" for _ in range(rng.randint(5, 200))]
        step = rng.choice([5, 10, 20])
        text = tick_line(labels, step, 1)
        start, width = rng.randint(0, len(text) - 1), rng.randint(1, 90)
        shown = "".join(segment.text for segment in window(Strip([Segment(text)]), start, width, True))
        words = {(m, m + len(w)) for m, w in _words(text)}
        for at, word in _words(shown):
            assert (start + at, start + at + len(word)) in words, (text, start, width, shown)


def _words(text: str) -> list[tuple[int, str]]:
    import re

    return [(m.start(), m.group()) for m in re.finditer(r"\S+", text)]
