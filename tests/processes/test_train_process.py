"""The trainer process: events stream back, pause/step/stop cross the process, snapshots are consistent
(each equals a headless Trainer's weights at the step it names: never a mix of two steps), and a killed
process leaves its last snapshot and one line."""

from __future__ import annotations

import os
import signal
import time

import pytest
import torch

from tui_lab import load_preset
from tui_lab.train import StepEvent, Trainer, train_config_for
from tui_lab.train.events import Event, event_from_dict
from tui_lab.train.process import TrainerProcess, TrainerSpec, model_from_snapshot

CONFIG = load_preset("gpt2-toy")
TINY = dict(batch_size=4, seq_len=16, lr=3e-3, eval_every=0, sample_every=0)


def started(steps: int, paused: bool = False, **fields) -> TrainerProcess:
    spec = TrainerSpec(CONFIG, train_config_for(None, steps=steps, **(TINY | fields)), threads=1)
    proc = TrainerProcess(spec)
    if paused:
        proc.pause()
    proc.start()
    return proc


def until(proc: TrainerProcess, kind: str, seen: list, timeout: float = 120.0):
    """Poll until a message of `kind` (for "event": a step event); every message goes into `seen`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = proc.poll(0.1)
        if message is None:
            continue
        seen.append(message)
        if message.kind == kind or (kind == "event" and isinstance(message, Event) and message.kind == "step"):
            return message
    raise AssertionError(f"no {kind} message in {timeout} s")


def step_events(proc: TrainerProcess, seen: list) -> list[int]:
    return [e.step for e in seen if isinstance(e, Event) and e.kind == "step"]


def test_events_round_trip_through_to_dict():
    event = StepEvent(3, 2.5, 1e-3, 0.7, {"block 0": 0.1}, 64, 1000.0, None, 0.05)
    assert event_from_dict(event.to_dict()) == event


def test_snapshots_while_running_equal_a_headless_trainer_at_their_step(tmp_path):
    proc = started(steps=12, paused=True)
    try:
        snapshots, seen = [], []
        until(proc, "ready", seen)
        for _ in range(2):  # two snapshots surely mid-run: a loaded machine (load 8, beside five long-tier crawlers)
            proc.step()  # ran all 12 tiny steps between the first step event and a pause request
            until(proc, "event", seen)
            snapshots.append(proc.fetch_snapshot())
        proc.resume()
        while proc.alive and not proc.finished:
            snapshots.append(proc.fetch_snapshot())  # while the child trains: taken between two steps
        until(proc, "ended", seen)
        snapshots.append(proc.fetch_snapshot())
        assert step_events(proc, seen) == list(range(1, 13))
        assert snapshots[-1].step == 12 and len({s.step for s in snapshots}) >= 2
        path = proc.save(tmp_path / "ckpt")  # the run's resumable checkpoint, after it ended
        assert (path / "train_state.json").exists()
    finally:
        proc.close()
    assert proc.exitcode == 0
    torch.set_num_threads(1)
    headless = Trainer(CONFIG, proc.spec.train)
    by_step = {s.step: s for s in snapshots}
    for step in range(1, 13):
        headless.step()
        if step in by_step:
            expected = headless.model.state_dict()
            assert all(torch.equal(by_step[step].state[k], v) for k, v in expected.items()), step
    model = model_from_snapshot(headless.model_config, snapshots[-1])  # a model of the parent's own
    assert not model.training
    assert all(torch.equal(v, headless.model.state_dict()[k]) for k, v in model.state_dict().items())


def test_pause_step_resume_stop_cross_the_process():
    proc = started(steps=400, paused=True)
    try:
        seen: list = []
        ready = until(proc, "ready", seen)
        assert ready.params > 0 and ready.tokenizer.vocab_size == ready.model_config.vocab
        time.sleep(1.0)
        while proc.poll(0.1) is not None:
            pass
        proc.step()  # paused: exactly one step
        until(proc, "event", seen)
        time.sleep(1.0)
        while (m := proc.poll(0.1)) is not None:
            seen.append(m)
        assert step_events(proc, seen) == [1]
        proc.resume()
        until(proc, "event", seen)
        until(proc, "event", seen)
        proc.pause()
        time.sleep(1.0)  # a step in flight finishes
        while (m := proc.poll(0.1)) is not None:
            seen.append(m)
        count = len(step_events(proc, seen))
        time.sleep(1.0)
        while (m := proc.poll(0.1)) is not None:
            seen.append(m)
        assert len(step_events(proc, seen)) == count >= 3 and proc.control.paused
        proc.stop()
        ended = until(proc, "ended", seen)
        assert ended.outcome == "stopped" and ended.step == count
        assert step_events(proc, seen) == list(range(1, count + 1))
    finally:
        proc.close()


def test_a_killed_process_keeps_the_last_snapshot_and_says_how_it_died():
    proc = started(steps=100_000)
    try:
        seen: list = []
        until(proc, "event", seen)
        kept = proc.fetch_snapshot()
        os.kill(proc._process.pid, signal.SIGKILL)
        proc._process.join(30)
        with pytest.raises(ValueError, match="killed by SIGKILL") as err:
            proc.fetch_snapshot(timeout=10)
        assert "\n" not in str(err.value)
        assert proc.snapshot is kept and kept.step >= 1 and not proc.alive
    finally:
        proc.close()


def test_a_run_that_cannot_start_is_one_line():
    proc = TrainerProcess(TrainerSpec(CONFIG, (None, {"steps": 0})))
    proc.start()
    try:
        failed = until(proc, "failed", [])
        assert "steps" in failed.error and "\n" not in failed.error
    finally:
        proc.close()
