"""The heatmap's read-out line in a narrow pane keeps the cell's value whole: the spacing, the axis names, then
the row note (cut after whole words, then dropped) give way before the number does (the Tour's side-by-side grids
at 80x24 used to end in "key [0]…"), and the number keeps a blank cell after it."""

from __future__ import annotations

import pytest
from app_support import screen_lines
from textual.app import App, ComposeResult

from tui_lab.app.widgets.heatmap import Heatmap

ROWS, COLS = ["vier", "hundert", "zwei"], ["four", "hundred", "thirty", "two"]
VALUES = [[0.125, 0.25, 0.5, 0.125], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.7499]]


class Narrow(App):
    CSS = "Heatmap { width: %d; height: 10; }"

    def __init__(self, width: int) -> None:
        super().__init__()
        self.CSS = self.CSS % width

    def compose(self) -> ComposeResult:
        yield Heatmap(id="map")

    def on_mount(self) -> None:
        grid = self.query_one(Heatmap)
        grid.set_grid(VALUES, ROWS, COLS, axes=("target", "source"),
                      row_notes=["", "", "decoder input 'hundert' predicts it"])
        grid.move_cursor(2, 3)


@pytest.mark.parametrize("width, readout", [
    (100, "target [2] 'zwei'  ->  source [3] 'two':  0.7499  (decoder input 'hundert' predicts it)"),
    (85, "target [2] 'zwei' -> source [3] 'two': 0.7499  (decoder input 'hundert' predicts it)"),
    (72, "[2] 'zwei' -> [3] 'two': 0.7499  (decoder input 'hundert' predicts it)"),
    (58, "target [2] 'zwei' -> source [3] 'two': 0.7499  (decoder…"),  # the note cut after whole words
    (33, "[2] 'zwei' -> [3] 'two': 0.7499 …"),
    (32, "[2] 'zwei' -> [3] 'two': 0.7499"),
    # the value never reaches the pane's last cell (issue 36's crawler: "0.2529│" in the Train view's alignment
    # grid at 160x48): a line too short for the bare form and a gap loses the indices, then the labels
    (31, "'zwei' -> 'two': 0.7499"),
    (20, "0.7499"),
])
async def test_a_narrow_read_out_drops_words_before_the_value(width, readout):
    app = Narrow(width)
    async with app.run_test(size=(120, 12)) as pilot:
        await pilot.pause()
        bottom = screen_lines(app)[9]
        assert bottom.rstrip() == readout
