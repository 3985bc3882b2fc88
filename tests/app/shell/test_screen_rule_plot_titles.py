"""The edge-word rule of tests/screen_rules.py on a plot: its title flush with the plot's right edge is whole
(plotext draws a title whole or not at all: the Train view's narrow "learning rate" plot, the long tier's
translator 160x48 walk), while a word of it cut at the edge is still found."""

from __future__ import annotations

from app_support import screen_lines
from screen_rules import edge_words
from textual.app import App, ComposeResult

from tui_lab.app.widgets.line_plot import Line, LinePlot


class OnePlot(App):
    CSS = "LinePlot { width: 30; height: 12; }"

    def compose(self) -> ComposeResult:
        yield LinePlot("learning rate", "step", "", id="lr")


def _with_line(lines: list[str], y: int, right: int, text: str) -> list[str]:
    lines = list(lines)
    lines[y] = (" " * (right - len(text)) + text).ljust(len(lines[y]))
    return lines


async def test_a_title_flush_with_the_edge_is_whole_and_a_cut_word_is_found():
    app = OnePlot()
    async with app.run_test(size=(40, 14)) as pilot:
        plot = app.query_one(LinePlot)
        plot.set_lines([Line("lr", [0, 1, 2], [4e-5, 3e-5, 2e-5])])
        await pilot.pause()
        lines, r = screen_lines(app), plot.region
        assert edge_words(app, lines) == []
        assert edge_words(app, _with_line(lines, r.y, r.right, "learning rate")) == []
        assert edge_words(app, _with_line(lines, r.y, r.right, "learning ra")) != []
