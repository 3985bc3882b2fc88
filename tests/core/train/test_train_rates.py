"""One definition of tokens/s and MFU (docs/CONTRACTS.md): which tokens, over which window, against which peak."""

import pytest
import torch
from train_helpers import lm_config, small_lm_data, tiny_lm, tiny_seq2seq

from tui_lab.data import load_task
from tui_lab.train import StepEvent, Trainer, train_config_for
from tui_lab.train import throughput as throughput_module
from tui_lab.train import trainer as trainer_module

PEAK = 1e11


def test_seq2seq_counts_real_source_and_target_tokens_not_padding():
    task = load_task("numbers-de")
    config = train_config_for("numbers-de", steps=2, batch_size=16, eval_every=0, sample_every=0)
    trainer = Trainer(tiny_seq2seq(), config, data=task, peak_flops=PEAK)
    first = trainer.source.batch("train", 16, torch.Generator().manual_seed(config.seed))  # the first step's
    source, target = int(first.src_mask.sum()), int((first.targets != -100).sum())
    assert first.src_mask.numel() > source  # this batch has padding, which must not count
    assert trainer.step().tokens == source + target


def test_language_model_counts_n_times_l():
    trainer = Trainer(tiny_lm(), lm_config(steps=1, batch_size=4, seq_len=16), data=small_lm_data(), peak_flops=PEAK)
    assert trainer.step().tokens == 4 * 16


def test_every_rate_is_over_the_same_window_and_the_done_event_agrees():
    events = []
    trainer = Trainer(tiny_lm(), lm_config(steps=6, eval_every=0), on_event=events.append, data=small_lm_data(),
                      peak_flops=PEAK)
    trainer.run()
    steps = [e for e in events if isinstance(e, StepEvent)]
    for k in range(1, len(steps) + 1):
        seen = steps[:k]
        rate = sum(e.tokens for e in seen) / sum(e.step_s for e in seen)
        assert seen[-1].tokens_per_s == pytest.approx(rate, rel=1e-9)
    done = events[-1]
    assert done.kind == "done" and done.tokens_per_s == steps[-1].tokens_per_s and done.mfu == steps[-1].mfu
    flops = trainer_module.training_flops_per_token(trainer.model_config, 32)
    assert done.mfu == pytest.approx(done.tokens_per_s * flops / PEAK, rel=1e-9)  # LM: every token is a target


def test_the_peak_is_not_measured_while_building_only_at_the_first_step(monkeypatch):
    calls = []
    monkeypatch.setattr(throughput_module, "matmul_peak_flops", lambda device, *dtype: calls.append(device) or 2e10)
    trainer = Trainer(tiny_lm(), lm_config(steps=2), data=small_lm_data())
    assert calls == []  # building a trainer (the app does it as a view opens) measures nothing
    event = trainer.step()
    trainer.step()
    assert calls == ["cpu"] and event.mfu > 0


def test_a_kept_peak_below_what_training_achieves_is_measured_again_once(tmp_path, monkeypatch):
    from tui_lab import hardware

    monkeypatch.setenv("TUI_LAB_CACHE", str(tmp_path))
    monkeypatch.setattr(hardware, "_PEAKS", {})
    key = hardware.peak_key("cpu", torch.float32)
    hardware._write_peak(key, 1e6, 1024)  # kept from a launch on a loaded (or another) machine
    trainer = Trainer(tiny_lm(), lm_config(steps=4), data=small_lm_data())
    events = [trainer.step() for _ in range(3)]
    assert all(0 < e.mfu <= 1 for e in events)  # never over 100%: the peak was measured again
    assert hardware.matmul_peak_flops("cpu") > 1e8 and trainer.peak_flops == hardware.matmul_peak_flops("cpu")
    calls = []
    monkeypatch.setattr(hardware, "_measure", lambda *a: calls.append(a) or 1.0)
    trainer.step()
    assert calls == []  # once per run
