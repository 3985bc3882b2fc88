"""A line plot knows what its last drawing cost, so the Train view can pace its redraws while a run trains."""

from __future__ import annotations

import time

from test_app_support import wait_for
from textual.app import App, ComposeResult

from tui_lab.app.widgets.line_plot import Line, LinePlot


class PlotApp(App):
    def compose(self) -> ComposeResult:
        yield LinePlot("loss", "step", "", id="plot")


async def test_cost_counts_the_render_and_paces_the_next_drawing():
    app = PlotApp()
    async with app.run_test(size=(100, 30)) as pilot:
        plot = app.query_one(LinePlot)
        xs = list(range(200))
        plot.set_lines([Line("train", xs, [3 - 0.01 * x for x in xs])])
        drawn = plot.cost_s
        await pilot.pause()
        await wait_for(pilot, lambda: plot.cost_s > drawn)  # plotext builds the figure when Textual renders it
        assert "loss" in "".join(strip.text for strip in plot.render_lines(plot.region.reset_offset))
        assert not plot.due(plot.cost_s / 60)  # at 1/60 of the UI thread, the next drawing waits ~60 x its cost
        time.sleep(plot.cost_s * 2)
        assert plot.due(0.5)
