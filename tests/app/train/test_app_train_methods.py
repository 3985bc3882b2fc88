"""Train view and seed 002's seq2seq methods (issue 13): the form sets scheduled sampling and guided attention,
the loss plot carries the teacher-forcing probability, and the alignment grid of the last run stays beside
this run's."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, view_mounted, wait_for
from screen_rules import text_problems
from textual.widgets import Input, Select

from tui_lab.app.views.train import form as train_form
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.train import scheduled_sampling

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _one_training_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")


def test_form_sampling_list_matches_the_engine():
    assert train_form.SAMPLING == scheduled_sampling.SCHEDULED_SAMPLING


async def run_copy(pilot, view, sampling: str, guided: str, steps: int) -> None:
    app = pilot.app
    app.query_one("#tf-sampling", Select).value = sampling
    app.query_one("#tf-guided", Input).value = guided
    for name, value in {"steps": "20", "batch_size": "8"}.items():
        app.query_one(f"#tf-{name}", Input).value = value
    view.action_start(paused=True)
    await wait_for(pilot, lambda: view.session.ready and "params" in view.message, 120)
    for _ in range(steps):
        before = len(view.store.current.train_loss)
        await pilot.press("n")
        await wait_for(pilot, lambda b=before: len(view.store.current.train_loss) > b)


async def test_schedule_on_the_loss_plot_and_two_alignments_side_by_side():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        await view_mounted(pilot, "train")
        app.show_view("train")
        await pilot.pause()
        app.query_one("#tf-data", Select).value = "copy"
        await pilot.pause()
        view = app.view("train")
        assert app.query_one("#tf-row-sampling").display and app.query_one("#tf-row-guided").display
        await run_copy(pilot, view, "exponential", "0", 3)
        run = view.store.current
        assert run.train["scheduled_sampling"] == "exponential" and run.teacher_forcing[0] == (1, 1.0)
        assert run.teacher_forcing[-1][1] < 1.0  # p_2 = k^2 < 1: decaying
        await wait_for(pilot, lambda: "p(gold input)" in [line.label for line in app.query_one("#tr-loss",
                                                                                                 LinePlot).lines])
        await wait_for(pilot, lambda: app.query_one("#tr-align", Heatmap).shape[0] > 0)
        first_shape = app.query_one("#tr-align", Heatmap).shape
        assert not app.query_one("#tr-align-prev").display  # nothing to compare with yet
        view.action_stop()
        await wait_for(pilot, lambda: not view.training, 60)
        # a second run with guided attention: the first run's last grid stays on the right
        await run_copy(pilot, view, "none", "1", 1)
        assert view.store.current.train["guided_attention"] == 1.0
        assert app.query_one("#tr-align-prev").display
        assert app.query_one("#tr-align-before", Heatmap).shape == first_shape
        prev_title = str(app.query_one("#tr-align-prev-title").render())
        assert "run #1" in prev_title and "guided 0" in prev_title and "sampling exponential" in prev_title
        await wait_for(pilot, lambda: "run #2 guided 1" in str(app.query_one("#tr-align-now-title").render()))
        # Read from the screen: the panel's titles whole, not cut with no mark (issue 36 item 19)
        lines = screen_lines(app)
        assert not [p for p in text_problems(app, lines) if "tr-align" in p], "\n".join(lines)
        view.action_stop()
        await wait_for(pilot, lambda: not view.training, 60)
