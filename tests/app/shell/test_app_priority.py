"""While a run trains the UI thread keeps the trainer's priority (its keys do not wait behind the trainer); lowered
on request (TUI_LAB_UI_NICE), every trainer still starts at the app's own priority."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from tui_lab.app import priority

pytestmark = pytest.mark.skipif(not priority.supported(), reason="per-thread nice values are Linux's")

CHILD_NICE = [sys.executable, "-c", "import os; print(os.nice(0))"]


def child_nice() -> int:
    return int(subprocess.run(CHILD_NICE, capture_output=True, text=True, check=True).stdout)


def in_fresh_thread(work):
    """`work()` on a new thread (its nice value drops for good, so never on the test's own thread)."""
    out = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as err:  # noqa: BLE001 - re-raised on the test's thread
            out["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def fresh_spawner(monkeypatch):
    monkeypatch.setattr(priority, "_spawner", None)
    yield
    if priority._spawner is not None:
        priority._spawner.shutdown(wait=True)


def test_by_default_the_ui_thread_keeps_the_trainers_priority(fresh_spawner, monkeypatch):
    """The app is one autogroup: a lowered UI thread yields only to its own trainer, and each key's echo waits
    behind the trainer's threads (benchmarks/interface/ui_latency.py: key p95 155 ms at nice 5, 78 ms at nice 0, under
    load, with the same training speed). A run must not lower it."""
    monkeypatch.delenv("TUI_LAB_UI_NICE", raising=False)

    def work():
        base = priority.thread_nice()
        return base, priority.yield_to_training(), priority.spawn(child_nice)

    base, during_run, trainer = in_fresh_thread(work)
    assert during_run == base == trainer


def test_the_ui_thread_yields_on_request_and_a_spawned_trainer_does_not(fresh_spawner, monkeypatch):
    monkeypatch.setenv("TUI_LAB_UI_NICE", "5")

    def work():
        base = priority.thread_nice()
        lowered = priority.yield_to_training()
        again = priority.yield_to_training()  # a second run: the thread stays where it is
        return base, lowered, again, priority.spawn(child_nice), child_nice()

    base, lowered, again, spawned, direct = in_fresh_thread(work)
    if base + 5 > 19:
        pytest.skip("this process already runs at the lowest priority")
    assert lowered == again == base + 5
    assert spawned == base  # the trainer keeps the app's priority, however often the UI thread yielded
    assert direct == lowered  # what the spawner is for: a process started by the yielded thread inherits it


def test_ui_nice_zero_leaves_the_thread_alone(fresh_spawner, monkeypatch):
    monkeypatch.setenv("TUI_LAB_UI_NICE", "0")

    def work():
        return priority.thread_nice(), priority.yield_to_training()

    base, after = in_fresh_thread(work)
    assert after == base
