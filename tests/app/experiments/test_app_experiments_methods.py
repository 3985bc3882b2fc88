"""The seed-002/003 method experiments in the Experiments view, read from the rendered screen: the list names
every one, and copy-names' quick run (the `k` box) draws its summary and its two loss curves."""

from __future__ import annotations

from app_experiments_support import open_view
from app_support import app_for, screen_text, wait_for
from textual.widgets import OptionList

from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.experiments import names

METHODS = ("nat-vs-at", "copy-names", "scheduled-sampling", "guided-attention", "activation-none", "moe-vs-dense")


async def test_the_list_names_the_method_experiments_and_copy_names_runs_quick():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(160, 48)) as pilot:
        view = await open_view(pilot)
        text = screen_text(app)
        assert all(name in text for name in METHODS), text
        app.query_one("#ex-list", OptionList).highlighted = names().index("copy-names")
        await pilot.pause()
        await wait_for(pilot, lambda: "repeat names it has never seen" in screen_text(app), 60)  # its lesson
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("k")  # the quick run
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running is None and view.result is not None, 600)  # two trainings
        await wait_for(pilot, lambda: "held-out exact match:" in screen_text(app), 30)
        assert view.result.experiment == "copy-names" and view.result.options["steps"] == 100  # quick's steps
        assert view.result.scalars["unseen_said_copy"] > view.result.scalars["unseen_said_no_copy"]
        await pilot.press("f")  # results -> plot: loss
        await pilot.pause()
        plot = app.query_one("#ex-plot", LinePlot)
        assert [line.label for line in plot.lines] == ["without copy", "with copy"]
