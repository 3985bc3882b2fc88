"""Speed view: cached vs uncached on a tiny model in a worker: both curves, a row per length, cancel."""

from __future__ import annotations

import pytest
from test_app_support import app_for, wait_for, wait_ready
from textual.widgets import DataTable, Input

from tui_lab.app.views.speed import parse_lengths
from tui_lab.app.widgets.line_plot import LinePlot

SIZE = (120, 40)


async def speed_view(pilot, lengths: str, repeats: str = "1"):
    app = pilot.app
    await wait_ready(pilot)
    await wait_for(pilot, lambda: bool(app.query("#view-speed")))
    app.show_view("speed")
    await pilot.pause()
    app.query_one("#sp-lengths", Input).value = lengths
    app.query_one("#sp-repeats", Input).value = repeats
    return app.view("speed")


async def test_both_curves_and_a_row_per_length_then_cancel():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await speed_view(pilot, "4, 12")
        await pilot.press("r")
        await wait_for(pilot, lambda: not view.running)
        report = view.report
        assert [r.new_tokens for r in report.runs] == [4, 12] and all(r.identical for r in report.runs)
        plot = app.query_one("#sp-plot", LinePlot)
        assert [line.label for line in plot.lines] == ["cached", "uncached"]
        assert all(len(line.xs) == 12 for line in plot.lines)
        assert app.query_one("#sp-table", DataTable).row_count == 2
        summary = str(app.query_one("#sp-summary").render())
        assert "faster at 12 tokens" in summary and "identical" in summary
        # a long comparison, cancelled: the worker stops between tokens and keeps what it measured
        app.query_one("#sp-lengths", Input).value = "4, 2000"
        await pilot.press("r")
        await wait_for(pilot, lambda: app.query_one("#sp-progress").progress >= 4)
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)
        assert view.report.cancelled and [r.new_tokens for r in view.report.runs] == [4]


def test_lengths_are_checked():
    assert parse_lengths("8, 16 32") == (8, 16, 32)
    for bad in ("", "a", "0, 4"):
        with pytest.raises(ValueError, match="lengths"):
            parse_lengths(bad)
