"""Experiments view: efficient-attention runs in the background and draws its error and time plots; the sweep
takes the self_attention axis (softmax vs performer: the same parameters, the features being a buffer).

`TUI_LAB_SCREENSHOTS=docs/screenshots` also keeps the README's picture (a quick run then, not the tiny one)."""

from __future__ import annotations

import os

from app_experiments_support import SMALL, open_view
from app_support import app_for, screen_text, wait_for
from snapshots import keep
from textual.widgets import Input, OptionList, Select

from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.experiments import names

TINY = ("n=32; features=16,64; draws=1; fit_steps=3; lengths=64,128; repeats=1; speed_k=16; speed_m=16; "
        "steps=3; batch_size=2; seq_len=8; layers=1; d_model=16; heads=2; d_head=8; seeds=0")
# The README's picture: the quick run's options, out to 8,192 tokens, one seed (the time plot is the picture)
PICTURE = "seeds=0; lengths=512,1024,2048,4096,8192"


async def test_efficient_attention_runs_in_the_view_and_draws_its_plots():
    picture = bool(os.environ.get("TUI_LAB_SCREENSHOTS"))
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(120, 36) if picture else SMALL) as pilot:
        view = await open_view(pilot)
        app.query_one("#ex-list", OptionList).highlighted = names().index("efficient-attention")
        await pilot.pause()
        await wait_for(pilot, lambda: "Linformer and Performer" in screen_text(app), 60)  # its title
        if picture:
            await pilot.press("k")  # the quick version
        app.query_one("#ex-options", Input).value = PICTURE if picture else TINY
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running is None and view.result is not None, 240)
        await wait_for(pilot, lambda: "Performer's error" in screen_text(app), 30)
        assert view.result.experiment == "efficient-attention"
        app.query_one("#ex-figure", Select).value = "plot:performer_error"
        await pilot.pause()
        plot = app.query_one("#ex-plot", LinePlot)
        assert [line.label for line in plot.lines] == ["performer", "c/sqrt(m) from the first m"]
        app.query_one("#ex-figure", Select).value = "plot:time"
        await pilot.pause()
        assert [line.label for line in plot.lines][:3] == ["exact (fused)", "linformer", "performer"]
        if picture:
            keep(app, "experiments-efficient-attention")


async def test_the_sweep_takes_the_self_attention_axis():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        app.query_one("#ex-list", OptionList).highlighted = names().index("sweep")
        await pilot.pause()
        app.query_one("#ex-field", Select).value = "self_attention"
        await pilot.pause()
        assert app.query_one("#ex-values", Input).value == "softmax, linformer, performer"  # filled from the axis
        app.query_one("#ex-values", Input).value = "softmax,performer"  # linformer: refused for a decoder
        app.query_one("#ex-options", Input).value = "steps=4; d_model=16; layers=1; batch_size=2; seq_len=8"
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running is None and view.result is not None, 240)
        rows = view.result.tables["runs"].rows
        assert [r[0] for r in rows] == ["softmax", "performer"] and rows[0][2] == rows[1][2]  # same parameters
        assert all(r[-1] is not None for r in rows)  # both trained and were evaluated
