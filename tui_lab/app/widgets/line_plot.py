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

import math
import time
from dataclasses import dataclass

from textual.app import RenderResult
from textual_plotext import PlotextPlot

COLOURS = ("cyan", "orange", "green", "magenta", "yellow", "blue", "red", "white")
TICKS = 5  # about as many ticks as plotext puts on an axis of an 80-column plot


def whole_ticks(lo: float, hi: float, most: int = TICKS) -> list[int]:
    """Whole-number ticks over [lo, hi] on a 1-2-5 step, at most `most` of them: an axis of steps or tokens
    reads "0 5 10 15", never plotext's even split "1.0 5.2 9.5 13.8 18.0"."""
    first, last = math.ceil(lo), math.floor(hi)
    if last <= first:
        return [first] if first == last else []
    step = 1
    while (last - first) // step + 1 > most:
        scale = 10 ** int(math.log10(step))
        step = next(k * scale for k in (1, 2, 5, 10) if k * scale > step)
    start = math.ceil(first / step) * step
    return list(range(start, last + 1, step))


def _whole(values: list[float]) -> bool:
    return all(float(v).is_integer() for v in values)


@dataclass(frozen=True)
class Line:
    label: str
    xs: list[float]
    ys: list[float]
    colour: str | tuple[int, int, int] | None = None  # a plotext name, or RGB (drawn as is, whatever the theme)
    marker: str = "braille"


class LinePlot(PlotextPlot):
    DEFAULT_CSS = "LinePlot { height: 1fr; min-height: 13; }"  # 8 rows to draw in, inside plotext's frame

    def __init__(
        self, title: str = "", xlabel: str = "", ylabel: str = "", *, id: str | None = None, classes: str | None = None
    ) -> None:
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

    def set_lines(
        self, lines: list[Line], vline: float | None = None, title: str | None = None, ymax: float | None = None
    ) -> None:
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
        try:
            rendered = super().render()
        except ValueError:
            # plotext's log axis takes log10 of each limit and tick; a frame whose range it cannot place (the
            # crawler met "math domain error" in a run's first frames) is drawn linear rather than end the app
            if not self.ylog:
                raise
            self.plt.yscale("linear")
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
        drawn = [(i, line) for i, line in enumerate(self.lines) if not (self.ylog and min(line.ys) <= 0)]
        # plotext cannot place log ticks with no data (it raised a TypeError while rendering): an empty plot
        # stays linear until a line comes, the box still says the axis is log
        plt.yscale("log" if self.ylog and drawn else "linear")
        for i, line in drawn:
            colour = line.colour or COLOURS[i % len(COLOURS)]
            plt.plot(line.xs, line.ys, label=line.label or None, color=colour, marker=line.marker)
        self._whole_ticks([line for _, line in drawn])
        if self.ymax is not None and self.lines and not self.ylog:
            plt.ylim(min(min(line.ys) for line in self.lines), self.ymax)
        if self.vline is not None and self.lines:
            plt.vline(self.vline, "gray")

    def _whole_ticks(self, lines: list[Line]) -> None:
        """Whole ticks on an axis whose values are all whole (steps, tokens, counts)."""
        xs = [x for line in lines for x in line.xs]
        if xs and _whole(xs):
            self.plt.xticks(whole_ticks(min(xs), max(xs)))
        ys = [y for line in lines for y in line.ys]
        if ys and _whole(ys) and not self.ylog and self.ymax is None:
            self.plt.yticks(whole_ticks(min(ys), max(ys)))
