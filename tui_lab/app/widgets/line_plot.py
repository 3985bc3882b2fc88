"""Line plots (loss, learning rate, latency) on plotext, redrawn only when their data changed.

textual-plotext rebuilds the whole figure on every refresh, so callers hand over bounded, downsampled
series (`tui_lab.app.runs.downsample`) and call `set_lines` at most a few times a second. Plotext is
not thread-safe: only the UI thread may call these methods. `set_log` switches the y axis to a log scale
(latencies that differ 100x then both show their shape).

`cost_s` is what the last drawing took on the UI thread (the figure's data, then plotext's build and the
text Textual paints, which happen at the next frame), so a caller can pace redraws by it (`due`). It is the
thread's CPU time, not the wall clock: on a loaded machine (the UI thread runs at a lower priority while a run
trains) a 30 ms drawing could take a second of wall time, and pacing by that held new points off the plot for
a minute.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import RenderResult
from textual_plotext import PlotextPlot

COLOURS = ("cyan", "orange", "green", "magenta", "yellow", "blue", "red", "white")


@dataclass(frozen=True)
class Line:
    label: str
    xs: list[float]
    ys: list[float]
    colour: str | tuple[int, int, int] | None = None  # a plotext name, or RGB (drawn as is, whatever the theme)
    marker: str = "braille"


class LinePlot(PlotextPlot):
    DEFAULT_CSS = "LinePlot { height: 1fr; min-height: 13; }"  # 8 rows to draw in, inside plotext's frame

    def __init__(self, title: str = "", xlabel: str = "", ylabel: str = "", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.lines: list[Line] = []
        self.vline: float | None = None
        self.ylog = False
        self.ymax: float | None = None  # the top of the y axis when set: outliers above it sit off the plot
        self.points = 0  # points drawn, summed over lines (tests and the benchmark read it)
        self.cost_s = 0.0  # the last drawing's UI-thread time: set_lines plus the render that followed it
        self._set_at = float("-inf")  # when set_lines last ran (time.monotonic)
        self._data_s = 0.0  # set_lines' share of cost_s

    def on_mount(self) -> None:
        super().on_mount()
        self._draw()

    def set_lines(self, lines: list[Line], vline: float | None = None, title: str | None = None,
                  ymax: float | None = None) -> None:
        self.lines, self.vline, self.ymax = [line for line in lines if line.xs], vline, ymax
        if title is not None:
            self.title = title
        self.points = sum(len(line.xs) for line in self.lines)
        start = time.thread_time()
        self._draw()
        self._data_s = self.cost_s = time.thread_time() - start
        self._set_at = time.monotonic()
        self.refresh()

    def due(self, share: float) -> bool:
        """True when a redraw now keeps the plot's drawing under `share` of the UI thread's time."""
        return time.monotonic() >= self._set_at + self.cost_s / share

    def render(self) -> RenderResult:
        start = time.thread_time()
        rendered = super().render()
        self.cost_s = self._data_s + time.thread_time() - start  # a re-render (resize) replaces, never adds
        return rendered

    def set_log(self, on: bool) -> None:
        """A log y axis (values must be > 0; a line with a value <= 0 is left out while it is on)."""
        self.ylog = on
        self._draw()
        self.refresh()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(self.title)
        plt.xlabel(self.xlabel)
        plt.ylabel(self.ylabel)
        plt.yscale("log" if self.ylog else "linear")
        for i, line in enumerate(self.lines):
            if self.ylog and min(line.ys) <= 0:
                continue  # no place on a log axis
            colour = line.colour or COLOURS[i % len(COLOURS)]
            plt.plot(line.xs, line.ys, label=line.label or None, color=colour, marker=line.marker)
        if self.ymax is not None and self.lines and not self.ylog:
            plt.ylim(min(min(line.ys) for line in self.lines), self.ymax)
        if self.vline is not None and self.lines:
            plt.vline(self.vline, "gray")
