"""A line plot knows what its last drawing cost, so the Train view can pace its redraws while a run trains."""

from __future__ import annotations

import time

from app_support import wait_for
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


async def test_time_the_ui_thread_waits_for_the_cores_is_not_its_cost(monkeypatch):
    # On a loaded machine the UI thread (at a lower priority while a run trains) waits for a core: a 30 ms
    # drawing took a second of wall time, and pacing by the wall clock held the next points off the loss plot
    # for a minute. The wait is stood in for by a sleep inside the drawing: no CPU, so no cost.
    from tui_lab.app.views.train.draw import PLOT_SHARE

    app = PlotApp()
    async with app.run_test(size=(100, 30)) as pilot:
        plot = app.query_one(LinePlot)
        draw = plot._draw

        def waiting_draw() -> None:
            time.sleep(0.3)
            draw()

        monkeypatch.setattr(plot, "_draw", waiting_draw)
        plot.set_lines([Line("train", [0, 1], [3.0, 2.0])])
        await pilot.pause()
        assert plot.cost_s < 0.1
        await wait_for(pilot, lambda: plot.due(PLOT_SHARE), timeout=10)  # by the wall clock: 20 s
