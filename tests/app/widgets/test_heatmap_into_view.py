"""A key that acts on a grid shows the grid: in a scrolled pane with only its legend line in sight, `z`, `#` and
the arrows scroll the pane to it (the long tier's translator 80x24 walk at f07fbe0, seed 543035602: the Experiments
view's figure grid below its pane's fold, `z` named beside it and nothing on screen changed)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tui_lab.app.widgets.heatmap import Heatmap


def square(grid: Heatmap, n: int) -> None:
    """An n x n grid of values rising row by row, its rows and columns numbered."""
    labels = [str(i) for i in range(n)]
    values = [[(r * n + c) / n ** 2 for c in range(n)] for r in range(n)]
    grid.set_grid(values, labels, labels, axes=("row", "col"), lo=0.0, hi=1.0)


class Pane(App):
    CSS = "#pane { height: 10; } #above { height: 9; } Heatmap { height: 8; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="pane"):
            yield Static("text above the grid", id="above")
            yield Heatmap(id="map")

    def on_mount(self) -> None:
        square(self.query_one(Heatmap), 5)


@pytest.mark.parametrize("key", ["z", "number_sign", "down"])
async def test_a_key_on_a_grid_below_the_fold_scrolls_its_pane_to_it(key):
    app = Pane()
    async with app.run_test(size=(60, 14)) as pilot:
        pane, grid = app.query_one("#pane"), app.query_one(Heatmap)
        grid.focus()
        await pilot.pause()
        pane.scroll_home(animate=False)  # the pane read from its top: the grid's first line at its bottom
        await pilot.pause()
        assert grid.region.y == pane.region.bottom - 1, (grid.region, pane.region)
        await pilot.press(key)
        await pilot.pause()
        assert pane.region.contains_region(grid.region), (key, grid.region, pane.region)


class Box(App):
    CSS = "#box { height: 12; } Heatmap { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Heatmap(id="map")

    def on_mount(self) -> None:
        square(self.query_one(Heatmap), 6)


async def test_a_box_shrunk_under_the_cursor_keeps_its_cell_in_sight():
    """The logit lens at 60x30 with its cursor on `final`, resized to 80x19, showed rows 0-2 and a read-out naming
    row 4, out of sight, until an arrow moved it."""
    app = Box()
    async with app.run_test(size=(60, 20)) as pilot:
        box, grid = app.query_one("#box"), app.query_one(Heatmap)
        grid.move_cursor(5, 0)
        await pilot.pause()
        assert grid.scroll_offset.y == 0  # every row fits: nothing scrolled
        box.styles.height = 7
        await pilot.pause()
        await pilot.pause()
        first = grid.scroll_offset.y
        assert first <= 5 < first + grid._view_lines, (first, grid._view_lines)
