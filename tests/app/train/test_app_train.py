"""Train view: start paused, step, pause, stop; the plot gets points; a non-finite loss keeps the last good
weights; the trained model becomes the live model; runs overlay and export to CSV; quitting asks first.

The run trains in a trainer process (tui_lab/train/process.py); with one thread on both sides its weights
equal a headless Trainer's of the same config and seed, step for step."""

from __future__ import annotations

import csv
import os

import pytest
import torch
from app_support import app_for, wait_for
from app_train_support import SIZE, start_paused, steps, train_view
from textual.widgets import Input

from tui_lab import load_preset
from tui_lab.app import priority
from tui_lab.app.modals.quit import QuitWhileTraining
from tui_lab.app.runs import Run, RunStore, downsample, label_runs
from tui_lab.app.views.train import form as train_form
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.train import Trainer
from tui_lab.train import config as train_config


@pytest.fixture(autouse=True)
def _one_training_thread(monkeypatch):
    """The trainer process trains with the test's one thread, so its weights equal a headless Trainer's."""
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")


def headless_weights(session, steps: int) -> dict[str, torch.Tensor]:
    """A Trainer of the run's own configs in this process, `steps` steps on."""
    trainer = Trainer(load_preset("gpt2-toy"), session.train_config)
    for _ in range(steps):
        trainer.step()
    return trainer.model.state_dict()


def assert_same_weights(model, expected: dict[str, torch.Tensor]) -> None:
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, expected[name]), name


def test_form_lists_match_the_engine():
    assert train_form.SCHEDULES == train_config.SCHEDULES and train_form.TOKENIZERS == train_config.TOKENIZERS
    for key, value in train_form.APP_LM.items():
        assert train_config.train_config_for(None, **train_form.APP_LM).to_dict()[key] == value


def test_downsample_bounds_points_and_labels_name_differences(tmp_path):
    points = [(i, float(i)) for i in range(10_000)]
    small = downsample(points, 200)
    assert len(small) == 200 and small[-1] == points[-1] and small[0][0] < small[1][0]
    runs = [Run(1, {"norm_position": "post", "d_model": 8}, {"lr": 0.001}),
            Run(2, {"norm_position": "pre", "d_model": 8}, {"lr": 0.001})]
    label_runs(runs)
    assert runs[0].label == "#1 norm_position=post" and runs[1].label == "#2 norm_position=pre"
    store = RunStore()
    store.runs = runs
    runs[0].train_loss, runs[0].val_loss = [(1, 2.0), (2, 1.5)], [(2, 1.7)]
    rows = list(csv.DictReader(store.export_csv(tmp_path / "h.csv").open()))
    assert [(r["step"], r["train_loss"], r["val_loss"]) for r in rows] == [("1", "2.0", ""), ("2", "1.5", "1.7")]


async def test_start_step_pause_stop_then_the_trained_model_is_live(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        # 4,000 steps: resumed, the run must still be going when it is paused again (at 40 a fast CPU finished it
        # between the two: an AMD EPYC's oneDNN steps, CI at 4a17dc7+, "done" where "stopped" was meant)
        view = await train_view(pilot, steps="4000")
        await start_paused(pilot, view)
        # the char tokenizer's vocab, not the preset's 256, said once (the setup's "vocab set to" said it again)
        assert "char vocabulary (63) replaces the preset's (256)" in view.message and "vocab set to" not in view.message
        # text cursors hold still while a run trains (a blink is a frame taken from the trainer), and blink after
        await wait_for(pilot, lambda: not any(field.cursor_blink for field in app.screen.query(Input)), 60)
        await steps(pilot, view, 3)
        assert [s for s, _ in view.store.current.train_loss] == [1, 2, 3]
        await wait_for(pilot, lambda: app.query_one("#tr-loss", LinePlot).points == 3)  # redrawn by a 1 Hz timer
        assert "step 3/4000" in str(app.query_one("#tr-status").render())
        view.action_pause()  # resume: it trains on its own
        await wait_for(pilot, lambda: len(view.store.current.train_loss) >= 5)
        view.action_pause()
        assert view.session.paused
        await pilot.press("x")
        await wait_for(pilot, lambda: app.live.origin.startswith("trained run #1") and not app.live.building, 60)
        session = view.session
        assert app.live.model is session.model and app.live.tokenizer is session.tokenizer
        assert app.live.config.vocab == session.tokenizer.vocab_size
        assert view.store.current.status == "stopped"
        trained = view.store.current.train_loss[-1][0]
        assert session.snapshot.step == trained >= 5
        assert_same_weights(app.live.model, headless_weights(session, trained))
        await pilot.press("c")
        rows = list(csv.DictReader(view.last_export.open()))
        assert len(rows) == len(view.store.current.train_loss) and rows[0]["run"] == "1"
        await pilot.press("w")  # save: the engine's resumable checkpoint
        await wait_for(pilot, lambda: (tmp_path / "runs" / "run-1" / "train_state.json").exists())
        # a second run with another lr, overlaid and labelled by the difference
        app.query_one("#tf-lr", Input).value = "0.001"
        await start_paused(pilot, view)
        await steps(pilot, view, 1)
        if priority.supported():  # the second run too starts at the app's priority; UI thread ui_nice() below
            trainer = os.getpriority(os.PRIO_PROCESS, view.session.process._process.pid)
            assert trainer == priority.spawner_nice()
            assert priority.thread_nice() == min(19, trainer + priority.ui_nice())
        await pilot.press("v")

        def labels() -> list[str]:
            return [line.label for line in app.query_one("#tr-loss", LinePlot).lines]

        await wait_for(pilot, lambda: "#1 lr=0.003" in labels() and "#2 lr=0.001" in labels())
        view.action_stop()
        await wait_for(pilot, lambda: not view.training)
        await wait_for(pilot, lambda: all(field.cursor_blink for field in app.screen.query(Input)), 60)


async def test_non_finite_loss_stops_with_a_message_and_keeps_the_last_good_weights():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await train_view(pilot, lr="1e35")  # step 1 throws the weights to ~1e33; step 2's loss is NaN
        await start_paused(pilot, view)
        await steps(pilot, view, 1)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.live.origin.startswith("trained run #1") and not app.live.building, 60)
        assert "not finite" in view.message and view.store.current.status == "error"
        assert app.live.model.training is False and view.session.snapshot.step == 1
        for tensor in app.live.model.state_dict().values():
            assert torch.isfinite(tensor).all()
        assert_same_weights(app.live.model, headless_weights(view.session, 1))
        await wait_for(pilot, lambda: "not finite" in str(app.query_one("#tr-status").render()))


async def test_quitting_while_training_asks_first():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await train_view(pilot)
        await start_paused(pilot, view)
        await pilot.press("q")
        assert isinstance(app.screen, QuitWhileTraining)
        await pilot.press("escape")
        assert not isinstance(app.screen, QuitWhileTraining) and view.training
        await pilot.press("q")
        await pilot.press("d")  # quit without saving: the run stops, then the app exits
        await wait_for(pilot, lambda: not view.training)
    assert view.session.ended
