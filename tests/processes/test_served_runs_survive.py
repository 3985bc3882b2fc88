"""Served runs survive (issue 37, items 3 and 8): a served session's run keeps a resumable checkpoint in the
session's folder as it goes and once more when its process group is ended (SIGTERM, as `serve` ends a session) or
its app closes (an idle or closed tab), within the 5 s the server promises; the app, started again for the
session, says where the run is; an experiment takes a training slot like any run and is refused when none is free.

Each trains gpt2-toy for a few seconds with a ~1 s interval (TUI_LAB_KEEP_EVERY_S), in a stand-in for the served
app: a process group of its own, its policy in the environment, its trainer process built by `run_keeping()`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch
from serve_support import group_members

from tui_lab import load_preset
from tui_lab.served import ENV, ServedPolicy
from tui_lab.train import Trainer, train_config_for

pytestmark = pytest.mark.slow

CONFIG = load_preset("gpt2-toy")
TINY = dict(steps=100_000, batch_size=4, seq_len=16, lr=3e-3, eval_every=0, sample_every=0)
PROMISE_S = 5.0  # serve ends a session, and every session on SIGTERM, within this

# The served app's part in a run, and nothing else: start the trainer process as the Train view does (its spec's
# keeping from the session's policy) and print each step it reports.
APP = textwrap.dedent("""
    import sys
    from tui_lab import load_preset
    from tui_lab.app.autosave import run_keeping
    from tui_lab.train import train_config_for
    from tui_lab.train.process import TrainerProcess, TrainerSpec
    spec = TrainerSpec(load_preset("gpt2-toy"), train_config_for(None, **eval(sys.argv[1])), threads=1,
                       **run_keeping())
    proc = TrainerProcess(spec)
    proc.start()
    print("child", proc._process.pid, flush=True)
    while True:
        message = proc.poll(0.5)
        if message is not None and message.kind == "step":
            print("step", message.step, flush=True)
""")


def session(tmp_path: Path, every_s: float, quota: int = 1024**3) -> tuple[ServedPolicy, dict[str, str]]:
    home = tmp_path / "root" / "sessions" / "token-of-this-test"
    home.mkdir(parents=True)
    policy = ServedPolicy(str(home), quota=quota, train_slots=2, root=str(tmp_path / "root"))
    env = os.environ | {ENV: policy.to_env(), "TUI_LAB_KEEP_EVERY_S": str(every_s), "PYTHONPATH": os.getcwd()}
    return policy, env


def start_app(policy: ServedPolicy, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", APP, repr(TINY)], cwd=policy.home, env=env, text=True,
                            stdout=subprocess.PIPE, start_new_session=True)  # its own group, as serve starts it


def read_steps(app: subprocess.Popen, until: int, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        words = app.stdout.readline().split()
        if words[:1] == ["step"] and int(words[1]) >= until:
            return int(words[1])
    raise AssertionError(f"no step {until} in {timeout} s")


def group_gone(pgid: int, timeout: float) -> float:
    """Seconds until no process of the group is left (zombies of the test's own child aside)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        alive = group_members(pgid)
        if not alive:
            return time.monotonic() - start
        time.sleep(0.02)
    raise AssertionError(f"the group {pgid} was still there after {timeout} s")


def kept_step(folder: Path) -> int:
    try:
        return json.loads((folder / "meta.json").read_text())["step"]
    except (OSError, ValueError, KeyError):  # not written yet, or being swapped in
        return 0


def assert_kept_and_resumes(folder: Path, at_least: int) -> int:
    """The folder holds the run past step 0: trained weights (not the starting model's) that resume."""
    from tui_lab.checkpoint import load_checkpoint

    kept = load_checkpoint(folder)
    assert kept.step >= max(at_least, 1), (kept.step, at_least)
    start = Trainer(CONFIG, train_config_for(None, **TINY)).model.state_dict()  # the run's step-0 weights
    assert any(not torch.equal(v, start[k]) for k, v in kept.model.state_dict().items())
    resumed = Trainer.from_checkpoint(folder, steps=kept.step + 2)
    assert resumed.run().kind == "done" and resumed.step_count == kept.step + 2
    return kept.step


def test_a_served_run_keeps_its_checkpoint_as_it_goes(tmp_path, monkeypatch):
    """Every ~0.5 s a resumable checkpoint; a trainer killed outright (SIGKILL: no last word) loses at most that."""
    from tui_lab.app.autosave import run_keeping
    from tui_lab.train.process import TrainerProcess, TrainerSpec

    policy, _ = session(tmp_path, every_s=0.5)
    monkeypatch.setenv(ENV, policy.to_env())  # the served app's environment, which its trainer process inherits
    monkeypatch.setenv("TUI_LAB_KEEP_EVERY_S", "0.5")
    proc = TrainerProcess(TrainerSpec(CONFIG, train_config_for(None, **TINY), threads=1, **run_keeping()))
    proc.start()
    folder = policy.home / "kept-run"
    try:
        first = wait_kept(folder, above=0)
        wait_kept(folder, above=first)  # and kept again, later: it goes on keeping
    finally:
        os.kill(proc._process.pid, signal.SIGKILL)
        proc.close(grace_s=1)
    assert_kept_and_resumes(folder, at_least=first + 1)


def wait_kept(folder: Path, above: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while kept_step(folder) <= above:
        assert time.monotonic() < deadline, f"no checkpoint past step {above} kept in {timeout} s"
        time.sleep(0.05)
    return kept_step(folder)


def test_sigterm_to_a_served_sessions_group_keeps_the_run_within_the_promise(tmp_path):
    """serve ends a session's group with SIGTERM: the run (never kept before: a 60 s interval) keeps its last step
    and the group is gone within the promise."""
    policy, env = session(tmp_path, every_s=60)
    app = start_app(policy, env)
    try:
        reached = read_steps(app, 5)
        assert not (policy.home / "kept-run").exists()  # the interval has not passed: only the last word keeps it
        os.killpg(app.pid, signal.SIGTERM)
        took = group_gone(app.pid, 10)
    finally:
        with_kill(app)
    print(f"SIGTERM -> group gone in {took:.2f} s")
    assert took < PROMISE_S
    assert_kept_and_resumes(policy.home / "kept-run", at_least=reached)


def with_kill(app: subprocess.Popen) -> None:
    try:
        os.killpg(app.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    app.wait()


def test_closing_two_training_sessions_keeps_both_runs_within_the_promise(tmp_path, monkeypatch):
    """An app closing (an idle or a closed tab: serve asks it to quit) closes its trainer process: with two runs
    training at once, both last steps are kept and both processes are gone within the promise."""
    from tui_lab.train.process import TrainerProcess, TrainerSpec

    runs = []
    for name in ("a", "b"):
        policy, env = session(tmp_path / name, every_s=60)
        monkeypatch.setenv(ENV, policy.to_env())  # read by the child when it starts (spawn copies the environment)
        spec = TrainerSpec(CONFIG, train_config_for(None, **TINY), threads=1, keep=str(policy.home / "kept-run"),
                           keep_every_s=60, keep_room=policy.check_quota)
        proc = TrainerProcess(spec)
        proc.start()
        runs.append((proc, policy.home / "kept-run"))
    try:
        reached = [wait_step(proc, 3) for proc, _ in runs]
        start = time.monotonic()
        closers = [threading.Thread(target=proc.close) for proc, _ in runs]  # as two apps quit at once
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()
        took = time.monotonic() - start
    finally:
        for proc, _ in runs:
            proc.close(grace_s=1)
    print(f"two runs closed and kept in {took:.2f} s")
    assert took < PROMISE_S and all(proc.exitcode == 0 for proc, _ in runs)
    for (_, folder), step in zip(runs, reached, strict=True):
        assert_kept_and_resumes(folder, at_least=step)


def wait_step(proc, step: int, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = proc.poll(0.1)
        if message is not None and message.kind == "step" and message.step >= step:
            return message.step
    raise AssertionError(f"no step {step} in {timeout} s")


def test_a_keep_past_the_quota_is_skipped_in_one_line(tmp_path):
    """The session's quota holds for the kept run too: the write is skipped, said once, and the run goes on."""
    from tui_lab.train.keep import Keeper

    policy, _ = session(tmp_path, every_s=60, quota=10_000)
    trainer = Trainer(CONFIG, train_config_for(None, **(TINY | {"steps": 2})))
    trainer.run()
    keeper = Keeper(policy.home / "kept-run", 60, policy.check_quota)
    said = keeper.final(trainer)
    assert said.startswith("the run is not kept as it goes: keeping the run needs about") and "quota" in said
    assert "\n" not in said and not (policy.home / "kept-run").exists()
    assert keeper.final(trainer) is None  # said once


async def test_the_next_visit_says_where_the_run_is_and_experiments_wait_for_a_slot(tmp_path, monkeypatch):
    """The app started again for the session tells where its run was kept; with every training slot taken (a run
    in another session), `r` in Experiments is refused in one line and nothing trains."""
    from app_support import app_for, view_mounted, wait_for, wait_ready
    from textual.widgets import OptionList, Static

    from tui_lab.served import training_slot
    from tui_lab.train.keep import Keeper

    home = tmp_path / "root" / "sessions" / "token-of-this-test"
    home.mkdir(parents=True)
    policy = ServedPolicy(str(home), train_slots=1, root=str(tmp_path / "root"))
    trainer = Trainer(CONFIG, train_config_for(None, **(TINY | {"steps": 3})))
    trainer.run()
    Keeper(home / "kept-run").final(trainer)  # the run the last visit kept
    monkeypatch.setenv(ENV, policy.to_env())
    monkeypatch.chdir(home)
    app = app_for("--preset", "gpt2-toy")
    other = ServedPolicy(str(tmp_path / "root" / "sessions" / "another-session"), train_slots=1,
                         root=policy.root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        notes = [str(n.message) for n in app._notifications]
        assert any(note.startswith("your run from ") and "kept at step 3 in kept-run/" in note and
                   "press o to load it" in note for note in notes), notes
        await view_mounted(pilot, "experiments")
        await pilot.press("f7")
        await pilot.pause()
        view = app.view("experiments")
        with training_slot(other):  # the server's only slot: another session's run holds it
            app.query_one("#ex-list", OptionList).focus()
            await pilot.press("r")
            await pilot.pause()
            status = str(app.query_one("#ex-status", Static).render())
            assert view.running is None and view.job == 0  # nothing started
            assert "refused: all 1 training slots of this server are in use" in status
            assert any("all 1 training slots" in str(n.message) for n in app._notifications)
        app.query_one("#ex-list", OptionList).focus()
        await pilot.press("r")  # the slot is free again: it runs
        await wait_for(pilot, lambda: "order-blindness done in" in str(app.query_one("#ex-status", Static).render()))


def test_a_queued_or_racing_experiment_holds_a_slot_or_fails_in_one_line(tmp_path, monkeypatch):
    """The experiment's worker itself takes the slot: it is refused when the slot went meanwhile, and holds it while
    it runs (a second session's run is refused then)."""
    from tui_lab.app.views.experiments.view import run_job
    from tui_lab.served import training_slot

    policy = ServedPolicy(str(tmp_path / "a"), train_slots=1, root=str(tmp_path))
    other = ServedPolicy(str(tmp_path / "b"), train_slots=1, root=str(tmp_path))
    monkeypatch.setenv(ENV, policy.to_env())
    seen = []

    class Poster:
        stopped = False

        def progress(self, *args) -> None:
            if not seen:
                with pytest.raises(ValueError, match="all 1 training slots"):
                    with training_slot(other):
                        pass
                seen.append("held")

    with training_slot(other), pytest.raises(ValueError, match="all 1 training slots of this server are in use"):
        run_job(Poster(), "order-blindness", {})
    from tui_lab.experiments import registry

    run_job(Poster(), "order-blindness", registry.get("order-blindness").resolve(True, {}))
    assert seen == ["held"]
