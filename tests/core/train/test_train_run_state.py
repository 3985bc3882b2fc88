"""The Train view's run state (`app/views/train/state.py`) without an app: a run is held while its trainer is built,
the person's p flips how it will start, and step, eval and sample events land in the run's record and the
status line's numbers (the ETA from the smoothed step time)."""

from __future__ import annotations

from tui_lab import load_preset
from tui_lab.app.views.train.session import TrainSession
from tui_lab.app.views.train.state import RunState
from tui_lab.train.events import EvalEvent, SampleEvent, StepEvent


def started(paused: bool = False) -> RunState:
    state = RunState()
    config = load_preset("gpt2-toy")
    run = state.store.start(config.to_dict(), {"task": None, "steps": 10})
    state.begin(TrainSession(run.number, config, (None, {"steps": 10}), paused=True), 10, paused)
    return state


def step(n: int, loss: float, step_s: float) -> StepEvent:
    return StepEvent(n, loss, 1e-3, 0.5, {"layer 0": 0.5}, 64, 1000.0, 0.1, step_s)


def test_a_run_is_held_while_built_and_p_flips_how_it_starts():
    state = started()
    assert state.training and state.phase() == "building the trainer" and not state.held_paused
    assert state.toggle_hold() == "paused" and state.held_paused
    assert state.release() == "paused" and state.hold is None
    assert state.phase() == "PAUSED" and state.held_paused  # the session was built paused: it stays so
    state.session.resume()
    assert state.phase() == "running" and not state.held_paused
    state.session.ended = True
    assert not state.training and state.phase() is None and state.eta_s() is None


def test_events_fill_the_record_and_the_numbers_and_the_eta_follows_the_smoothed_step_time():
    state = started()
    state.record(step(1, 4.0, 2.0))
    state.record(step(2, 3.5, 1.0))
    state.record(EvalEvent(2, 3.7))
    state.record(SampleEvent(2, "llo", prompt="he"))
    run = state.store.current
    assert run.train_loss == [(1, 4.0), (2, 3.5)] and run.val_loss == [(2, 3.7)]
    assert state.stats["step"] == 2 and state.stats["loss"] == 3.5 and state.stats["val"] == 3.7
    assert "'he'" in state.stats["sample"] and "'llo'" in state.stats["sample"]
    assert state.eta_s() == (10 - 2) * (0.8 * 2.0 + 0.2 * 1.0)
    assert state.mine(run.number) and not state.mine(run.number + 1)
