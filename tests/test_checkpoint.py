import json

import pytest
import torch

import tui_lab.checkpoint as checkpoint_module
from tests.test_train_helpers import lm_config, small_lm_data, tiny_lm
from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.data import char_tokenizer
from tui_lab.model import build_model
from tui_lab.train import StepEvent, Trainer

PEAK = 1e11


def test_round_trip_keeps_weights_tokenizer_and_config(tmp_path):
    config = tiny_lm(vocab=20)
    model = build_model(config)
    tokenizer = char_tokenizer("abcdefghijklmnop")
    save_checkpoint(tmp_path / "ck", model, tokenizer, meta={"note": "x"})
    names = {p.name for p in (tmp_path / "ck").iterdir()}
    assert names == {"config.json", "model.safetensors", "tokenizer", "meta.json"}
    assert not list(tmp_path.glob(".*"))  # no temporary folder left behind
    ck = load_checkpoint(tmp_path / "ck")
    assert ck.config == config and ck.meta == {"note": "x"} and ck.train_state is None
    assert ck.tokenizer.encode("abc") == tokenizer.encode("abc")
    for (name, a), b in zip(model.state_dict().items(), ck.model.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert ck.model.lm_head.weight is ck.model.tok_embed.weight  # still tied


def test_no_pickle_anywhere(tmp_path):
    trainer = Trainer(tiny_lm(), lm_config(steps=2), data=small_lm_data(), peak_flops=PEAK)
    trainer.run()
    trainer.save(tmp_path / "ck")
    files = sorted(p.name for p in (tmp_path / "ck").rglob("*") if p.is_file())
    assert all(name.endswith((".json", ".safetensors")) for name in files), files
    state = json.loads((tmp_path / "ck" / "train_state.json").read_text())
    assert state["step"] == 2 and state["scheduler"]["name"] == "cosine" and {"cpu", "data"} <= set(state["rng"])


def test_a_crash_mid_write_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    folder = tmp_path / "ck"
    tokenizer = char_tokenizer("abcdefghijklmnop")
    first = build_model(tiny_lm(vocab=20))
    save_checkpoint(folder, first, tokenizer, meta={"version": 1})

    def crash(*args, **kwargs):
        raise OSError("disk full")  # after config.json, model and tokenizer were written to the temp folder

    monkeypatch.setattr(checkpoint_module, "_write_json", _crash_on_meta(checkpoint_module._write_json, crash))
    second = build_model(tiny_lm(vocab=20, d_ff=128))
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(folder, second, tokenizer, meta={"version": 2})
    ck = load_checkpoint(folder)
    assert ck.meta == {"version": 1} and ck.config.d_ff == 64
    assert torch.equal(ck.model.tok_embed.weight, first.tok_embed.weight)


def _crash_on_meta(write, crash):
    def patched(path, data):
        if path.name == "meta.json":
            crash()
        write(path, data)

    return patched


def test_a_folder_that_is_not_a_checkpoint_is_a_one_line_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="not a checkpoint: it lacks model.safetensors, tokenizer"):
        load_checkpoint(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path / "nope")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a checkpoint"):
        save_checkpoint(tmp_path / "other", build_model(tiny_lm()), char_tokenizer("ab"))


def test_resume_continues_the_same_run_50_plus_50_equals_100(tmp_path):
    """Dropout on, so the RNG state has to come back too, not just weights and optimizer."""
    config = lm_config(steps=100, eval_every=0, seed=7, schedule="cosine", warmup=10)
    model_config = tiny_lm(dropout=0.2)
    straight = []
    whole = Trainer(model_config, config, on_event=_steps(straight), data=small_lm_data(), peak_flops=PEAK)
    whole.run()

    first, second = [], []
    half = Trainer(model_config, config, on_event=_steps(first), data=small_lm_data(), peak_flops=PEAK)
    for _ in range(50):
        half.step()
    half.save(tmp_path / "ck")
    resumed = Trainer.from_checkpoint(tmp_path / "ck", on_event=_steps(second), data=small_lm_data())
    assert resumed.step_count == 50
    resumed.run()
    assert len(second) == 50
    assert first + second == pytest.approx(straight, rel=1e-5, abs=1e-6)
    for (name, a), b in zip(whole.model.state_dict().items(), resumed.model.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), name


def test_resume_needs_training_state(tmp_path):
    save_checkpoint(tmp_path / "ck", build_model(tiny_lm(vocab=20)), char_tokenizer("abcdefghijklmnop"))
    with pytest.raises(ValueError, match="cannot be resumed"):
        Trainer.from_checkpoint(tmp_path / "ck")


def _steps(into: list):
    return lambda e: into.append(e.train_loss) if isinstance(e, StepEvent) else None
