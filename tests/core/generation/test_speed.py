"""The speed comparison on a tiny model: structure, identical tokens, progress, cancel, bad input, default
lengths that fit the window and runs that slid said so."""

from __future__ import annotations

import json

import pytest
import torch

from tui_lab import ModelConfig, build_model, load_preset
from tui_lab.bench.kv_speed import compare_generation
from tui_lab.cli import main
from tui_lab.generation.lengths import default_lengths, longest_fitting, slid_steps


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
        for path in ("cached", "uncached"):  # the spread over repeats brackets the median at every position
            low, mid, high = (run[f"{path}_step{part}_s"] for part in ("_min", "", "_max"))
            assert len(low) == len(high) == run["new_tokens"]
            assert all(a <= b <= c for a, b, c in zip(low, mid, high, strict=True))
            assert any(a < c for a, c in zip(low, high, strict=True))  # two real runs never time alike throughout
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


def test_a_slid_run_is_reported_as_slid_with_its_steps_and_a_plain_note():
    model = tiny_model(max_len=8)
    report = compare_generation(model, prompt_len=4, new_tokens=(5, 10), repeats=1)
    fits, slides = report.to_dict()["runs"]
    assert (fits["slid"], fits["slid_steps"]) == (False, 0)  # 4 + 5 - 1 = 8 tokens fed: fits exactly
    assert (slides["slid"], slides["slid_steps"]) == (True, 5) and slides["identical"]  # 4 + 10 - 1 - 8
    assert report.max_len == 8 and len(report.notes) == 1
    assert report.notes[0].startswith("10 new tokens after a 4-token prompt pass max_len 8: the last 5 steps")


@pytest.mark.parametrize("preset, lengths", [("gpt2-toy", (64, 128, 240)), ("transformer-2017-toy", (64, 128, 256))])
def test_default_lengths_of_the_presets_fit_their_window(preset, lengths):
    config = load_preset(preset)
    assert default_lengths(config, 16) == lengths
    assert all(slid_steps(config, 16, n) == 0 for n in lengths)
    assert default_lengths(config, 16, longest=128) == (32, 64, 128)  # the Speed view's shorter set


@pytest.mark.parametrize("max_len, prompt_len", [(8, 4), (48, 16), (64, 1), (300, 16), (17, 16)])
def test_default_lengths_never_slide(max_len, prompt_len):
    config = tiny_model(max_len=max_len).config
    lengths = default_lengths(config, prompt_len)
    assert lengths and all(n >= 1 for n in lengths) and list(lengths) == sorted(set(lengths))
    assert all(slid_steps(config, prompt_len, n) == 0 for n in lengths)
    assert slid_steps(config, prompt_len, longest_fitting(config, prompt_len) + 1) == 1


def test_compare_generation_defaults_to_lengths_that_fit():
    report = compare_generation(tiny_model(max_len=24), prompt_len=4, repeats=1)
    assert tuple(run.new_tokens for run in report.runs) == (4, 8, 16)  # 24 - 4 + 1 = 21 fit, cut to 16
    assert not report.notes and not any(run.slid for run in report.runs)


def test_a_prompt_longer_than_the_window_leaves_no_default_length():
    with pytest.raises(ValueError, match="prompt_len"):
        default_lengths(tiny_model(max_len=8).config, 9)


def test_bench_generate_says_when_a_length_slid(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps at the terminal's width; keep the table's rows whole
    # A long prompt slides past max_len in a few steps: 26 uncached steps over a ~256-token window cost a
    # fifth of 250 steps from a 16-token prompt (the default), on the same sliding code.
    bench = ["bench", "generate", "--preset", "gpt2-toy", "--prompt-len", "240", "--repeats", "1", "--new-tokens"]
    assert main([*bench, "2", "26"]) == 0
    out = capsys.readouterr().out
    assert "26 (slid)" in out and "slid: 26 new tokens after a 240-token prompt pass max_len 256" in out
    assert "2 (slid)" not in out  # 240 + 2 fits
    assert main([*bench, "26", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"][0]["slid"] and data["runs"][0]["slid_steps"] == 9 and data["max_len"] == 256
    assert data["notes"] and data["threads"] == {"cached": 1, "uncached": 1}  # OMP_NUM_THREADS=1 in tests
