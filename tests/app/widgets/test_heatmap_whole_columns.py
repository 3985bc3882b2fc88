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
