"""Running out of device memory is one line naming the device, and what was loaded or trained survives.

No GPU here: torch.OutOfMemoryError is raised by hand (with CUDA's own wording) where the device would.
Also: a device that is not there (`cuda` without CUDA, `cuda:1` on a one-GPU box) and bf16 autocast training.
"""

from __future__ import annotations

import json
import statistics

import pytest
import torch

import tui_lab.generation.loop
import tui_lab.loading
import tui_lab.train.trainer
from tui_lab import load_preset
from tui_lab.devices import out_of_memory_line, pick_device
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.loading import load_model
from tui_lab.train import ErrorEvent, StepEvent, Trainer, train_config_for

CUDA_OOM = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 "
            "GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use.\nSee documentation")
TINY = dict(decoder_layers=1, d_model=32, heads=2, d_ff=64)


def oom(*args, **kwargs):
    raise torch.OutOfMemoryError(CUDA_OOM)


def small_trainer(**fields) -> Trainer:
    fields = dict(steps=5, batch_size=2, seq_len=16, eval_every=0, sample_every=0) | fields
    return Trainer(load_preset("gpt2-toy", **TINY), train_config_for(None, **fields))


def test_an_out_of_memory_error_is_one_line_naming_the_device():
    line = out_of_memory_line(torch.OutOfMemoryError(CUDA_OOM), "cuda:0", "training step 3", "try less")
    assert line == "out of memory on cuda:0 while training step 3 (it tried to allocate 2.00 GiB); try less"
    cpu = RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1099511627776 bytes.")
    assert out_of_memory_line(cpu, "cpu", "generating").startswith("out of memory on cpu while generating")
    assert out_of_memory_line(ValueError("lr (0) must be positive"), "cuda", "training") is None


def test_a_training_step_out_of_memory_is_an_error_event_and_keeps_the_last_good_weights(monkeypatch):
    trainer = small_trainer()
    assert isinstance(trainer.step(), StepEvent)
    kept = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    seen = []
    trainer.on_event = seen.append
    monkeypatch.setattr(tui_lab.train.trainer, "loss_sums", oom)
    event = trainer.step()
    assert isinstance(event, ErrorEvent) and seen == [event]
    assert event.message.startswith("out of memory on cpu while training step 2 (it tried to allocate 2.00 GiB)")
    assert "\n" not in event.message and trainer.step_count == 1
    assert all(torch.equal(kept[k], v) for k, v in trainer.model.state_dict().items())
    assert all(p.grad is None for p in trainer.model.parameters())
    monkeypatch.undo()  # memory freed elsewhere: the same trainer goes on
    assert isinstance(trainer.step(), StepEvent) and trainer.step_count == 2


def test_a_run_that_runs_out_of_memory_ends_with_the_error_instead_of_raising(monkeypatch):
    trainer = small_trainer()
    monkeypatch.setattr(tui_lab.train.trainer, "loss_sums", oom)
    last = trainer.run()
    assert isinstance(last, ErrorEvent) and last.message.startswith("out of memory on cpu while training step 1")


def test_building_a_model_that_does_not_fit_is_one_line(monkeypatch):
    monkeypatch.setattr(tui_lab.train.trainer, "build_model", oom)
    with pytest.raises(ValueError, match=r"^out of memory on cpu while building the model to train \(it tried"):
        small_trainer()
    monkeypatch.setattr(tui_lab.loading, "_random", oom)
    with pytest.raises(ValueError) as err:
        load_model("preset", "gpt2-toy", device="cpu")
    assert str(err.value).startswith("out of memory on cpu while building 'gpt2-toy' (it tried to allocate")


def test_generation_out_of_memory_is_one_line(monkeypatch):
    loaded = load_model("config", load_preset("gpt2-toy", **TINY), device="cpu")
    monkeypatch.setattr(loaded.model, "decode", oom)
    monkeypatch.setattr(loaded.model, "forward", oom)
    with pytest.raises(ValueError) as err:
        complete(loaded.model, loaded.codec, [1, 2, 3], GenerationSettings(max_new_tokens=4, temperature=0.0))
    assert str(err.value).startswith("out of memory on cpu while generating (it tried to allocate 2.00 GiB)")


def test_missing_cuda_devices_are_one_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"^--device \('cuda'\): CUDA is not available on this machine$"):
        pick_device("cuda", field="--device")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match=r"^--device \('cuda:1'\) is not available: this machine has 1 CUDA"):
        pick_device("cuda:1", field="--device")
    assert pick_device("cuda:0") == "cuda:0"


def test_bf16_autocast_trains_like_fp32_and_measures_mfu_against_the_bf16_peak():
    losses = {}
    for precision in ("fp32", "bf16"):
        trainer = small_trainer(steps=20, precision=precision, lr=3e-3, warmup=2)
        losses[precision] = [trainer.step().train_loss for _ in range(20)]
    assert trainer.peak_dtype == torch.bfloat16
    assert abs(losses["bf16"][-1] - losses["fp32"][-1]) < 0.05
    assert statistics.mean(losses["bf16"][-5:]) < 0.9 * statistics.mean(losses["bf16"][:5])
    with pytest.raises(ValueError, match=r"^precision \('fp16'\) must be one of: fp32, bf16$"):
        train_config_for(None, precision="fp16")


def test_the_command_line_says_it_in_one_line(monkeypatch, capsys):
    from cli_support import run_cli

    monkeypatch.setattr(tui_lab.train.trainer, "loss_sums", oom)
    done = run_cli(capsys, "train", "--preset", "gpt2-toy", "--steps", "3", "--batch-size", "2", "--seq-len", "8",
                   "--json")
    assert done.returncode == 1
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["event"] == "error" and last["message"].startswith("out of memory on cpu while training step 1 (it")
    monkeypatch.setattr(tui_lab.generation.loop, "stream", oom)
    done = run_cli(capsys, "generate", "--preset", "gpt2-toy", "--prompt", "hi", "--temperature", "0")
    assert done.returncode == 2 and done.stderr.splitlines()[-1] == (
        "tui-lab: error: out of memory on cpu while generating (it tried to allocate 2.00 GiB); try fewer new tokens "
        "or a smaller beam")
