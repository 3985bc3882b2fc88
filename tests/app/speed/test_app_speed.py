"""Speed view, read from the rendered screen: both curves as running totals (every series named), the totals and the
speedup on the plot, the predicted FLOPs split, the overhead note for the toy, the log axis, the demo model,
a row per length and cancel."""

from __future__ import annotations

import re

import pytest
from app_support import app_for, screen_lines, screen_text, view_mounted, wait_for, wait_ready
from screen_reader import read_svg
from textual.widgets import DataTable, Input

from tui_lab.analysis.cost import decode_flops_per_token, decode_step_flops
from tui_lab.app.background_job import JobDone
from tui_lab.app.view_contract import TrainingChanged
from tui_lab.app.views.speed.view import DEMO, Measured, parse_lengths
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.bench.kv_speed import SpeedReport, SpeedRun

SIZE = (120, 40)  # tall enough for plotext to space its y ticks evenly (the log test reads them)
SMALL = (80, 24)
SERIES = ("cached", "uncached", "cached FLOPs at peak", "uncached FLOPs at peak")
TICK = re.compile(r"^\s*([\d.]+)┤")


async def speed_view(pilot, lengths: str, repeats: str = "2", demo: bool = False):
    app = pilot.app
    await wait_ready(pilot)
    await view_mounted(pilot, "speed")
    app.show_view("speed")
    await pilot.pause()
    view = app.view("speed")
    if view.demo != demo:
        await pilot.press("d")
    app.query_one("#sp-lengths", Input).value = lengths
    app.query_one("#sp-repeats", Input).value = repeats
    return view


def series_colours(screen) -> tuple[dict[str, str | None], dict[str | None, int]]:
    """The legend's entries with their marker's colour, and how many braille cells of the plot each colour draws."""
    legend, marks = {}, set()
    for y in range(screen.height):
        line = screen.line(y)
        for m in re.finditer(r"⢕⢕ (\w[\w ]*?)(?=  |\s*[│┐]|\s*$)", line):
            legend[m.group(1)] = screen.fg[y][m.start()]
            marks |= {(y, m.start()), (y, m.start() + 1)}
    drawn: dict[str | None, int] = {}
    for y in range(screen.height):
        for x, ch in enumerate(screen.chars[y]):
            if "\u2800" < ch <= "\u28ff" and (y, x) not in marks:
                drawn[screen.fg[y][x]] = drawn.get(screen.fg[y][x], 0) + 1
    return legend, drawn


def gaps(ticks: list[float]) -> list[float]:
    """Differences between successive y ticks, top to bottom."""
    return [a - b for a, b in zip(ticks, ticks[1:], strict=False)]


def y_ticks(app) -> list[float]:
    return [float(m.group(1)) for line in screen_lines(app) if (m := TICK.match(line))]


async def test_curves_spread_totals_prediction_overhead_note_and_log_axis():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await speed_view(pilot, "4, 12")
        assert not view.demo
        await pilot.press("r")
        await wait_for(pilot, lambda: not view.running, 60)
        await pilot.pause()
        report, run = view.report, view.report.runs[-1]
        assert [r.new_tokens for r in report.runs] == [4, 12] and all(r.identical for r in report.runs)
        text = screen_text(app)
        # seconds spent against tokens generated: every series drawn is named in the legend, no cloud of
        # per-token dots, the totals and speedup in the title
        for name in SERIES:
            assert f"⢕⢕ {name}" in text
        assert "seconds" in text and "tokens generated" in text and "median of 2)" in text
        legend, _ = series_colours(read_svg(app.export_screenshot(), *SIZE))
        assert set(legend) == set(SERIES) and len(set(legend.values())) == len(SERIES), legend
        plot_rows = [line for line in screen_lines(app) if "│" in line]
        assert sum(line.count("·") for line in plot_rows) == 0
        # the curves are running totals: the axis' top is the uncached total (with room), whatever one slow step
        top = y_ticks(app)[0]
        assert sum(run.uncached_step_s) <= top * 1.01 <= 1.15 * sum(run.uncached_step_s)
        assert f"cached {run.cached_s:.3g}s, uncached {run.uncached_s:.3g}s in all: {run.speedup:.2f}x" in text
        assert f"{run.speedup:.2f}x faster at 12 tokens" in text and "identical" in text
        # the predicted split at the last step: context 16 + 11, from the analysis
        d2, ld = decode_flops_per_token(app.live.model.config, 27, cached=True)
        assert f"per token at L=27: cached {(d2 + ld) / 1e6:.3g} MFLOP (L*d {ld / (d2 + ld):.0%})" in text
        assert "GFLOP/s matmul peak" in text and "FLOPs predict" in text
        assert "mostly per-step overhead at this size" in text  # the toy's steps are overhead
        assert "the FLOPs floors lie low on a linear axis (l: log)" in " ".join(text.split())
        assert app.query_one("#sp-table", DataTable).row_count == 2
        # log scale: the y ticks go from evenly spaced to evenly spaced ratios
        linear = y_ticks(app)
        steps = gaps(linear)
        assert len(linear) >= 3 and max(steps) - min(steps) <= 0.1 * max(steps) + 0.05
        await pilot.press("l")
        await pilot.pause()
        assert app.query_one("#sp-log", OnOffCheckbox).value and app.query_one("#sp-plot", LinePlot).ylog
        logged = y_ticks(app)
        assert logged != linear
        ratios = [a / b for a, b in zip(logged, logged[1:], strict=False)]
        assert max(ratios) / min(ratios) < 1.3 and max(gaps(logged)) > 2 * min(gaps(logged))
        await pilot.press("l")
        await pilot.pause()
        assert y_ticks(app) == linear
        # a long comparison, cancelled: the worker stops between tokens and keeps what it measured
        app.query_one("#sp-lengths", Input).value = "4, 2000"
        await pilot.press("r")
        await wait_for(pilot, lambda: app.query_one("#sp-progress").progress >= 6)
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)
        assert view.report.cancelled and [r.new_tokens for r in view.report.runs] == [4]


def apart_report(config) -> tuple[SpeedReport, dict[str, float]]:
    """A measured run whose four curves stay apart: each measured step a fixed multiple of its path's floor.

    The toy's real floors are ~1% of what it measures (overhead), flat on the axis' bottom row where the uncached
    floor covers the cached one as often as not (a busy CPU measures more and flattens them further), so the check
    of every series' colour draws a report it chose."""
    peaks = {"cached": 1e9, "uncached": 1e9}
    floor = {cached: [sum(step) / peaks["cached"] for step in decode_step_flops(config, 16, 12, cached)]
             for cached in (True, False)}
    cached, uncached = [3 * s for s in floor[True]], [1.5 * s for s in floor[False]]
    run = SpeedRun(12, sum(cached), sum(uncached), True, False, 0, cached, uncached)
    report = SpeedReport("cpu", 16, 1, 2, threads={"cached": 1, "uncached": 1}, runs=[run])
    return report, peaks


async def test_every_series_is_drawn_in_its_legend_colour_in_both_themes():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await speed_view(pilot, "12")
        config = app.live.model.config
        report, peaks = apart_report(config)
        view.job_finished(JobDone(view.job, result=Measured(report, config, peaks)), None)
        await pilot.pause()
        for theme in ("dark", "light"):  # each series its own colour, its legend entry the same, both themes
            legend, drawn = series_colours(read_svg(app.export_screenshot(), *SIZE))
            assert set(legend) == set(SERIES) and len(set(legend.values())) == len(SERIES), (theme, legend)
            assert all(drawn.get(colour, 0) >= 3 for colour in legend.values()), (theme, legend, drawn)
            await pilot.press("t")
            await pilot.pause()


async def test_the_demo_model_is_the_default_for_the_toy_and_leaves_the_live_model_alone():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await speed_view(pilot, "3", repeats="1", demo=True)
        live = app.live.model
        assert app.query_one("#sp-demo", OnOffCheckbox).value  # the toy is no wider than the demo
        assert app.query_one("#sp-lengths", Input).placeholder == "512"
        await pilot.press("r")
        await wait_for(pilot, lambda: "demo model" in screen_text(app))
        await wait_for(pilot, lambda: not view.running, 60)
        assert view.config == DEMO and app.live.model is live
        assert [r.new_tokens for r in view.report.runs] == [3]
        # at 80x24 the plot keeps 8 rows (issue 25): its totals show at the top, the split a scroll down
        # (scrolled again at each look: the end of the run may still move the focus, and the pane with it)
        run, pane = view.report.runs[0], app.query_one("#sp-results")
        totals = f"cached {run.cached_s:.3g}s, uncached {run.uncached_s:.3g}s in all: {run.speedup:.2f}x"
        await wait_for(pilot, lambda: pane.scroll_home(animate=False) or totals in screen_text(app), 30)
        analysis = app.query_one("#sp-analysis")
        await wait_for(pilot, lambda: analysis.scroll_visible(animate=False) or
                       "per token at L=18: cached" in screen_text(app), 30)
        assert "L*d" in screen_text(app)


def test_lengths_are_checked():
    assert parse_lengths("8, 16 32") == (8, 16, 32)
    for bad in ("", "a", "0, 4"):
        with pytest.raises(ValueError, match="lengths"):
            parse_lengths(bad)


async def test_run_pressed_mid_measurement_says_it_started_again():
    """`r` while a measurement runs restarts it and says so in a message (the same summary line alone read as ignored,
    a dead press the crawler met in CI at 80x24)."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await speed_view(pilot, "4, 2000", repeats="1", demo=True)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.query_one("#sp-progress").progress >= 2)
        first = view.job
        await pilot.press("r")
        # run_test draws no toasts, so the message is read where the toast is made from
        await wait_for(pilot, lambda: any("started again" in n.message for n in app._notifications))
        assert view.job == first + 1 and view.running
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)


async def test_speed_hears_that_a_run_trains_from_the_app_not_from_the_train_view():
    """A measurement started while a run trains says both share the CPU. The Speed view hears of the run from the
    message the Train view posts and the App passes on to every view (view_contract.py), and of its end the same
    way: after it, the next measurement says nothing of training."""
    app = app_for("--preset", "gpt2-toy")

    def said() -> str:  # the summary wraps: its words, whatever line they fell on
        return " ".join(screen_text(app).replace("│", " ").split())

    async with app.run_test(size=SIZE) as pilot:
        view = await speed_view(pilot, "4, 2000", repeats="1", demo=True)
        await view_mounted(pilot, "train")
        app.view("train").post_message(TrainingChanged(True))  # what the Train view posts as a run starts
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: "training is running too" in said())
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)
        app.view("train").post_message(TrainingChanged(False))  # and as it ends
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: "measuring the demo model" in said())
        assert "training is running too" not in said()
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)
