"""Line plots, read from the rendered screen: the Speed view's log axis over a plot with no data (`6` `l` ended
the app with plotext's `power10(None)`), and whole ticks on an axis of whole values (steps, tokens)."""

from __future__ import annotations

import re

from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready
from textual.app import App, ComposeResult

from tui_lab.app.widgets.line_plot import Line, LinePlot, whole_ticks
from tui_lab.app.widgets.toggle import OnOffCheckbox


async def test_log_axis_over_an_empty_plot_keeps_the_app():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6", "l")
        box = app.query_one("#sp-log", OnOffCheckbox)
        await wait_for(pilot, lambda: box.value, 10)
        await pilot.pause()
        text = screen_text(app)
        assert "seconds spent vs tokens generated" in text and "Traceback" not in text
        await pilot.press("l", "l")  # off and on again, still no data
        await pilot.pause()
        assert box.value and app.is_running


class OnePlot(App):
    def __init__(self, lines: list[Line]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        yield LinePlot("loss", "step", "", id="plot")

    def on_mount(self) -> None:
        self.query_one(LinePlot).set_lines(self.lines)


def _tick_row(text: str) -> str:
    """The x axis's tick labels: the line under the plot's bottom frame."""
    lines = text.splitlines()
    bottom = max(i for i, line in enumerate(lines) if "└" in line)
    return lines[bottom + 1]


async def test_whole_steps_get_whole_ticks():
    steps = list(range(1, 19))
    app = OnePlot([Line("train", [float(s) for s in steps], [3.0 / s for s in steps])])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        ticks = _tick_row(screen_text(app)).split()
        assert ticks == ["5", "10", "15"], ticks
        # the loss axis keeps its fractions: its values are not whole
        assert re.search(r"\d\.\d+\s*┤", screen_text(app))


def test_whole_ticks_step_one_two_five():
    assert whole_ticks(2, 201) == [50, 100, 150, 200]
    assert whole_ticks(0, 7) == [0, 2, 4, 6]
    assert whole_ticks(1.5, 1.7) == []
