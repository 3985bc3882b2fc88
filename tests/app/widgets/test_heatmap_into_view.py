"""A key that acts on a grid shows the grid: in a scrolled pane with only its legend line in sight, `z`, `#` and
the arrows scroll the pane to it (the long tier's translator 80x24 walk at f07fbe0, seed 543035602: the Experiments
view's figure grid below its pane's fold, `z` named beside it and nothing on screen changed)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_lab.app.widgets.heatmap import Heatmap


class Pane(App):
    CSS = "#pane { height: 10; } #above { height: 9; } Heatmap { height: 8; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="pane"):
            yield Static("text above the grid", id="above")
            yield Heatmap(id="map")

    def on_mount(self) -> None:
        values = [[(r * 5 + c) / 25 for c in range(5)] for r in range(5)]
        labels = [str(i) for i in range(5)]
        self.query_one(Heatmap).set_grid(values, labels, labels, axes=("row", "col"), lo=0.0, hi=1.0)


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
