"""A training run's thread count follows the load (issue 39): chosen at the start for a step's largest op,
chosen again at a step boundary once RECHOOSE_S has passed (a choice expires), forced by
TUI_LAB_TRAIN_THREADS, left alone off the CPU. Rules, not timings (benchmarks/speed/threads.py times them)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from tui_lab import cpu_threads
from tui_lab.presets import load_preset
from tui_lab.train import threads as train_threads


def fake_trainer(device: str = "cpu", preset: str = "gpt2-toy", batch: int = 16, context: int = 64):
    return SimpleNamespace(device=device, model_config=load_preset(preset), is_seq2seq=False,
                           train_config=SimpleNamespace(batch_size=batch),
                           source=SimpleNamespace(context=lambda: context))


@pytest.fixture(autouse=True)
def _machine(monkeypatch):
    """A 2-core machine whose load each test sets; torch's count comes back after."""
    monkeypatch.delenv("TUI_LAB_TRAIN_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu_threads, "usable_cores", lambda: 2)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def load(monkeypatch, others: float) -> None:
    monkeypatch.setattr(cpu_threads, "load_now", lambda: cpu_threads.Load(2, others, "fake", None))


def test_a_toy_batch_takes_both_cores_when_idle_and_one_beside_a_busy_process(monkeypatch):
    load(monkeypatch, 0.0)
    follower = train_threads.TrainThreads(fake_trainer())  # 16 x 64 tokens x 128 x 512: worth sharing
    assert follower.apply().threads == 2 and torch.get_num_threads() == 2
    load(monkeypatch, 1.0)
    assert follower.apply().threads == 1 and torch.get_num_threads() == 1


def test_a_choice_expires_and_is_taken_again_between_steps(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(train_threads.time, "monotonic", lambda: clock[0])
    load(monkeypatch, 0.0)
    follower = train_threads.TrainThreads(fake_trainer())
    seen = []
    handler = follower.follow(seen.append)
    follower.apply()
    load(monkeypatch, 3.0)  # other work arrives
    step = SimpleNamespace(kind="step")  # what the handler reads of a StepEvent
    clock[0] += train_threads.RECHOOSE_S / 2
    handler(step)
    assert torch.get_num_threads() == 2 and seen == [step]  # not expired yet: kept
    clock[0] += train_threads.RECHOOSE_S
    handler(step)
    assert torch.get_num_threads() == 1 and follower.choice.load.others == 3.0  # expired: taken again
    assert follower.ceiling == 2  # the count it set did not lower its ceiling


def test_the_override_wins_and_off_the_cpu_nothing_changes(monkeypatch):
    monkeypatch.setattr(cpu_threads, "load_now", lambda: pytest.fail("read the load"))
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")
    assert train_threads.TrainThreads(fake_trainer()).apply().why == "forced by TUI_LAB_TRAIN_THREADS"
    before = torch.get_num_threads()
    assert train_threads.TrainThreads(fake_trainer(device="cuda:0")).apply() is None
    assert torch.get_num_threads() == before
