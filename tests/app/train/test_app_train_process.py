"""Train view with the trainer process dying mid-run: one line, the live model stays, the last snapshot is
kept and `w` saves it."""

from __future__ import annotations

import os
import signal

import torch
from app_support import app_for, wait_for, wait_ready
from app_train_support import SIZE, start_paused, steps, train_view


async def test_killing_the_trainer_process_is_one_line_and_keeps_the_live_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        live = app.live.model
        before = {k: v.clone() for k, v in live.state_dict().items()}
        view = await train_view(pilot, steps="100000")
        await start_paused(pilot, view)
        await steps(pilot, view, 2)
        process = view.session.process
        process.request_snapshot()
        await wait_for(pilot, lambda: view.session.snapshot is not None and view.session.snapshot.step == 2)
        view.action_pause()  # resume: it trains on its own until it is killed
        await wait_for(pilot, lambda: len(view.store.current.train_loss) >= 4, 60)
        os.kill(process._process.pid, signal.SIGKILL)
        await wait_for(pilot, lambda: not view.training, 30)
        assert "killed by SIGKILL" in view.message and "\n" not in view.message
        kept = view.session.snapshot
        assert kept.step >= 2 and f"snapshot (step {kept.step}) is kept" in view.message
        assert "live model is unchanged" in view.message
        assert view.store.current.status == "failed"
        assert app.live.model is live and all(torch.equal(v, before[k]) for k, v in live.state_dict().items())
        await pilot.press("w")  # the kept snapshot, as a weights-only checkpoint
        await wait_for(pilot, lambda: (tmp_path / "runs" / "run-1" / "model.safetensors").exists(), 60)
        from tui_lab.checkpoint import load_checkpoint

        saved = load_checkpoint(tmp_path / "runs" / "run-1").model.state_dict()
        assert all(torch.equal(saved[k], v) for k, v in kept.state.items())


async def test_a_run_past_free_memory_is_refused_in_one_line_before_its_process_starts(monkeypatch):
    """The form's batch and seq len take any number; a trainer process past the machine's memory would be ended
    by the kernel. The run is refused in one line naming both, no process starts, the live model stays."""
    import tui_lab.devices
    import tui_lab.train.process

    def started(*args, **kwargs):
        raise AssertionError("a trainer process was built")

    monkeypatch.setattr(tui_lab.devices, "free_memory", lambda device: 1 << 30)
    monkeypatch.setattr(tui_lab.train.process, "TrainerProcess", started)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        live = app.live.model
        view = await train_view(pilot, batch_size="99999", seq_len="128")
        view.action_start()
        await wait_for(pilot, lambda: not view.training and "free" in view.message, 20)
        assert "training batch 99,999 x seq len 128 needs about" in view.message, view.message
        assert "1.0 GiB is free on cpu; lower batch or seq len" in view.message and "\n" not in view.message
        assert view.store.current.status == "failed" and app.live.model is live
