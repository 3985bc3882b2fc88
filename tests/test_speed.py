"""The speed comparison on a tiny model: structure, identical tokens, progress, cancel, bad input."""

from __future__ import annotations

import pytest
import torch

from tui_lab import ModelConfig, build_model
from tui_lab.generation.speed import compare_generation


def tiny_model(family: str = "decoder-only", positions: str = "learned", max_len: int = 64):
    layers = {"encoder_layers": 1, "decoder_layers": 1} if family == "encoder-decoder" else {"decoder_layers": 2}
    torch.manual_seed(0)
    return build_model(ModelConfig(family=family, d_model=32, heads=2, d_ff=64, vocab=30, max_len=max_len,
                                   positions=positions, dropout=0.1, **layers))


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_report_has_one_run_per_length_with_identical_tokens(family):
    model = tiny_model(family, "sinusoidal")
    report = compare_generation(model, prompt_len=4, new_tokens=(3, 10), repeats=2, batch=2)
    data = report.to_dict()
    assert [run["new_tokens"] for run in data["runs"]] == [3, 10]
    for run in data["runs"]:
        assert run["identical"] is True and run["slid"] is False
        assert run["cached_s"] > 0 and run["uncached_s"] > 0
        assert run["speedup"] == pytest.approx(run["uncached_s"] / run["cached_s"])
        assert run["cached_tokens_per_s"] == pytest.approx(2 * run["new_tokens"] / run["cached_s"])
        assert len(run["cached_step_s"]) == len(run["uncached_step_s"]) == run["new_tokens"]
        assert sum(run["cached_step_s"]) == pytest.approx(run["cached_s"], rel=0.5)
    assert data["device"] == "cpu" and data["batch"] == 2 and data["cancelled"] is False


def test_progress_counts_every_run_and_model_mode_is_restored():
    model = tiny_model()
    model.train()
    seen = []
    compare_generation(model, prompt_len=2, new_tokens=(2, 4), repeats=3, on_progress=lambda d, t: seen.append((d, t)))
    total = 2 * 2 * (3 + 1)  # lengths x (cached, uncached) x (warm-up + repeats)
    assert seen == [(i, total) for i in range(1, total + 1)]
    assert model.training


def test_should_stop_cancels_and_keeps_what_was_measured():
    model = tiny_model()
    calls = {"n": 0}

    def stop_after_first_length() -> bool:
        calls["n"] += 1
        return calls["n"] > 2 * (1 + 1) * 3  # the first length's tokens: 2 modes x 2 runs x 3 tokens

    report = compare_generation(model, prompt_len=2, new_tokens=(3, 50), repeats=1, should_stop=stop_after_first_length)
    assert report.cancelled and [run.new_tokens for run in report.runs] == [3]


def test_learned_positions_past_max_len_say_they_slid():
    model = tiny_model(max_len=8)
    run = compare_generation(model, prompt_len=4, new_tokens=(10,), repeats=1).runs[0]
    assert run.slid and run.identical


@pytest.mark.parametrize("kwargs, field", [
    (dict(prompt_len=0), "prompt_len"), (dict(new_tokens=()), "new_tokens"), (dict(new_tokens=(4, 0)), "new_tokens"),
    (dict(repeats=0), "repeats"), (dict(batch=0), "batch"), (dict(bos_id=30), "bos_id"),
])
def test_bad_settings_are_value_errors(kwargs, field):
    with pytest.raises(ValueError, match=field):
        compare_generation(tiny_model(), **kwargs)
