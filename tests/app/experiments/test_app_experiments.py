"""Experiments view, read from the rendered screen: run order-blindness in the background, its sentences,
results and per-token grid; export; the sweep's field picker and a queued quick sweep with its curves;
cancel; a bad option is one line and nothing runs."""

from __future__ import annotations

import json
import threading

from app_experiments_support import SMALL, open_view
from app_support import app_for, screen_lines, screen_text, wait_for
from textual.widgets import Input, OptionList, Select

from tui_lab.app.views.experiments import draw
from tui_lab.app.views.experiments import view as experiments_view
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.config import CHOICES
from tui_lab.experiments import names


async def test_order_blindness_runs_in_the_background_shows_sentences_grid_and_exports(tmp_path, monkeypatch):
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path))
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        assert "Attention is blind to word order" in screen_text(app)
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running is None and view.result is not None, 240)  # torch loads first
        await wait_for(pilot, lambda: "without_positions_max_diff" in screen_text(app), 30)  # drawn after the result
        text = screen_text(app)
        assert "sentence: I like you because you like me" in text and "shuffled: " in text
        assert "without_positions_max_diff" in text  # the results table
        assert view.result.scalars["without_positions_max_diff"] < 1e-5
        for label in ("table: tokens", "grid: differences"):  # after results; each comes into sight at 80x24
            await pilot.press("f")
            await wait_for(pilot, lambda label=label: label in screen_text(app), 5)
        app.query_one("#ex-list", OptionList).focus()  # Home in the list brings the notes f scrolled away back
        await pilot.press("home")
        await wait_for(pilot, lambda: "sentence: I like you" in screen_text(app), 5)
        grid = app.query_one("#ex-grid", Heatmap)
        assert grid.display and grid.shape == (3, 7) and grid.col_labels[0] == "I"
        grid.focus()  # its z and # are named on its legend line; on the footer they pushed q quit off at 80 columns
        await pilot.pause()
        lines = screen_lines(app)
        assert "q quit" in lines[-1] and "z dense" not in lines[-1] and "numbers" not in lines[-1]
        assert any("z dense · # numbers" in line for line in lines[:-1])
        await pilot.press("z")
        await wait_for(pilot, lambda: grid.dense, 5)
        await pilot.press("e")
        await wait_for(pilot, lambda: any(p.name.endswith("-tokens.csv") for p in tmp_path.iterdir()), 60)
        # the status says so on screen, however far the keys scrolled the notes and the figure
        await wait_for(pilot, lambda: "CSV files to" in screen_text(app), 5)
        exported = sorted(p.name for p in tmp_path.iterdir())
        jsons = [name for name in exported if name.endswith(".json")]
        assert len(jsons) == 1 and any(name.endswith("-tokens.csv") for name in exported)
        data = json.loads((tmp_path / jsons[0]).read_text())
        assert data["scalars"]["with_positions_max_diff"] > 1e-2


def gate_runs(monkeypatch) -> list[threading.Event]:
    """Each run waits in its worker until the test opens its gate (gates[job]): the first run is still going
    however fast its steps are, so a short sweep can be queued behind it and cancelled without a race."""
    gates = [threading.Event() for _ in range(4)]  # made up front: the worker threads only wait on them
    real = experiments_view.run_job

    def gated(poster, *args):
        gates[poster.job].wait(60)
        return real(poster, *args)

    monkeypatch.setattr(experiments_view, "run_job", gated)
    return gates


async def test_sweep_picker_fills_values_queues_runs_and_cancel_empties_the_queue(monkeypatch):
    gates = gate_runs(monkeypatch)
    app = app_for("--preset", "gpt2-toy")
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            view = await open_view(pilot)
            app.query_one("#ex-list", OptionList).highlighted = names().index("sweep")
            await pilot.pause()
            assert app.query_one("#ex-sweep").display
            app.query_one("#ex-field", Select).value = "norm"
            await pilot.pause()
            assert app.query_one("#ex-values", Input).value == ", ".join(CHOICES["norm"])  # filled from the axis
            app.query_one("#ex-values", Input).value = "layernorm,rmsnorm"  # two runs are enough to watch
            app.query_one("#ex-options", Input).value = "steps=100; d_model=16; layers=1; batch_size=2; seq_len=8"
            app.query_one("#ex-list", OptionList).focus()
            await pilot.pause()
            await pilot.press("r")
            await pilot.press("r")  # queued behind the first (held at its gate)
            assert view.running == "sweep" and len(view.queue) == 1, str(app.query_one("#ex-status").render())
            gates[1].set()
            await wait_for(pilot, lambda: view.result is not None and len(view.result.tables["runs"].rows) == 2, 120)
            await pilot.pause()
            plot = app.query_one("#ex-plot", LinePlot)
            app.query_one("#ex-figure", Select).value = "plot:loss"
            await pilot.pause()
            assert [line.label for line in plot.lines] == ["norm=layernorm", "norm=rmsnorm"]
            await wait_for(pilot, lambda: view.job == 2, 60)  # the queued run started
            await pilot.press("r")  # a third, queued behind the second
            assert len(view.queue) == 1
            await pilot.press("x")
            assert not view.queue  # emptied at once
            gates[2].set()  # the second run starts with its stop already asked for
            await wait_for(pilot, lambda: view.running is None, 60)
            await pilot.pause()
            assert view.job == 2 and not view.queue  # the third never started
            assert "sweep cancelled; the queue was emptied" in screen_text(app)
    finally:
        for gate in gates:  # a failed assertion must not leave a worker waiting
            gate.set()


async def test_a_bad_option_is_one_line_and_nothing_runs():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        app.query_one("#ex-options", Input).value = "seed=many"
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("r")
        await pilot.pause()
        assert view.running is None and view.job == 0
        assert any("seed must be a whole number, got 'many'" in str(n.message) for n in app._notifications)


async def test_enter_in_a_field_runs_or_says_why_not_on_the_screen():
    """Enter in the options field did nothing (no run, no message); it runs, as Generate's fields do, and a bad
    value's one line shows as the toast a person reads."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        view = await open_view(pilot)
        field = app.query_one("#ex-options", Input)
        field.focus()
        await pilot.press(*"seed=many", "enter")
        await pilot.pause()
        assert view.running is None and view.job == 0
        await wait_for(pilot, lambda: "seed must be a whole number" in screen_text(app), 10)
        field.value = ""
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.job == 1, 10)
        assert app.focused is field  # the field keeps the focus: the next Enter queues


def test_sets_parse_with_semicolons_and_refuse_a_bare_word():
    assert draw.parse_sets("values=a,b; seeds=0,1 ;") == {"values": "a,b", "seeds": "0,1"}
    try:
        draw.parse_sets("steps")
    except ValueError as err:
        assert "name=value separated by ';'" in str(err)
    else:
        raise AssertionError("a bare word must be refused")


def test_table_cells_of_the_scalars():
    from tui_lab.experiments import Result

    result = Result("x", {}, scalars={"a": 1.23456, "b": 1e-7})
    assert draw.table_cells(result, "") == (["result", "value"], [["a", "1.235"], ["b", "1e-07"]])


async def test_induction_heads_runs_in_the_view_and_plots_both_models_losses():
    """A short run (no phase change expected in 40 steps): its loss plot holds both models' two curves and
    the summary says what each did, read from the screen at 80x24."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        app.query_one("#ex-list", OptionList).highlighted = names().index("induction-heads")
        await pilot.pause()
        await wait_for(pilot, lambda: "induction head" in screen_text(app), 60)  # its lesson
        app.query_one("#ex-options", Input).value = "steps=40; eval_every=20; eval_batch=8; warmup=5"
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running is None and view.result is not None, 240)
        await wait_for(pilot, lambda: "two layers:" in screen_text(app) and "one layer:" in screen_text(app), 30)
        assert view.result.experiment == "induction-heads"
        await pilot.press("f")  # results -> plot: loss
        await pilot.pause()
        plot = app.query_one("#ex-plot", LinePlot)
        assert [line.label for line in plot.lines][:4] == ["1 layer, first block", "1 layer, repeated block",
                                                           "2 layers, first block", "2 layers, repeated block"]
