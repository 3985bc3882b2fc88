"""Bounds checked before work starts (issue 24): nan and inf, beams past the vocabulary, runs past a time or
memory estimate (refused unless --yes), flags that do not apply to the chosen tokenizer, and messages that
name what the person typed."""

from __future__ import annotations

import pytest

from tui_lab.analysis.budget import budget_problem, generation_budget, training_budget
from tui_lab.cli import main
from tui_lab.generation.settings import GenerationSettings
from tui_lab.presets import load_preset
from tui_lab.train.config import TrainConfig


class Ran(Exception):
    pass


def _ran(*args, **kwargs):
    raise Ran


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("tui-lab: error: ") and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("argv, needle", [
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--temperature", "nan"], "--temperature (nan)"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--temperature", "inf"], "--temperature (inf)"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--beam-size", "100000"],
     "--beam-size (100000) must be at most the vocabulary (256 tokens)"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--top-k", "300"], "--top-k (300)"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--max-new-tokens", "1000000000"], "add --yes"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--beam-size", "3", "--top-p", "0.5"],
     "--top-p does not apply to beam search"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--temperature", "0", "--top-k", "5"],
     "--top-k does not apply to greedy"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--seed", "-1"], "--seed (-1)"),
    (["train", "--lr", "inf"], "lr (inf) must be a finite number"),
    (["train", "--set", "norm_eps=inf"], "norm_eps must be a finite number"),
    (["train", "--set", "betas=0.9,nan"], "betas (nan)"),
    (["train", "--steps", str(10**12)], "add --yes"),
    (["train", "--d-model", "1000000", "--heads", "1"], "of memory but"),
    (["train", "--vocab", "1"], "--vocab applies to the bpe tokenizer only"),
    (["train", "--vocab", "600", "--set", "tokenizer=char"], "--vocab applies to the bpe tokenizer only"),
    (["train", "--resume", "nowhere", "--vocab", "600"], "--vocab does not apply with --resume nowhere"),
    (["train", "--task", "copy", "--tokenizer", "bpe"], "--tokenizer does not apply with --task copy"),
    (["train", "--task", "copy", "--seq-len", "9"], "--seq-len does not apply with --task copy"),
    (["info", "--layers", "1000000000000"], "decoder_layers (1000000000000) must be from 0 to 1000"),
    (["info", "--set", "dropout=nan"], "dropout must be a finite number"),
    (["bench", "generate", "--preset", "gpt2-toy", "--new-tokens", "100000000"], "add --yes"),
    (["experiment", "run", "lora", "--set", "steps=1000000"], "steps (1000000) must be at most 10x"),
    (["experiment", "run", "lora", "--set", "lr_lora=inf"], "lr_lora (inf) must be a finite number"),
])
def test_out_of_range_is_one_line_before_any_work(argv, needle, capsys, monkeypatch):
    import tui_lab.train
    from tui_lab.generation import session

    monkeypatch.setattr(session, "complete", _ran)
    monkeypatch.setattr(tui_lab.train, "Trainer", _ran)
    assert main(argv) == 2
    assert needle in one_line(capsys)


def test_yes_runs_past_the_time_limit_but_never_past_memory(capsys, monkeypatch):
    from tui_lab.generation import session

    monkeypatch.setattr(session, "complete", _ran)
    base = ["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--max-new-tokens", "100000000"]
    assert main(base) == 2
    err = one_line(capsys)
    assert "at least" in err and "of memory" in err and "--yes" in err  # the estimate, and the way round it
    with pytest.raises(Ran):  # --yes: the generation itself starts
        main([*base, "--yes"])
    capsys.readouterr()  # the model's label line, printed as generation began
    assert main([*base, "--yes", "--beam-size", "200", "--max-new-tokens", str(10**10)]) == 2
    assert "of memory but" in one_line(capsys)


def test_train_yes_reaches_the_trainer(capsys, monkeypatch):
    import tui_lab.train

    monkeypatch.setattr(tui_lab.train, "Trainer", _ran)
    with pytest.raises(Ran):
        main(["train", "--steps", str(10**9), "--yes", "--device", "cpu"])


def test_from_hf_file_names_the_file(tmp_path, capsys):
    stray = tmp_path / "notes.txt"
    stray.write_text("not a model")
    assert main(["generate", "--from-hf", str(stray), "--prompt", "x"]) == 2
    err = one_line(capsys)
    assert f"--from-hf {stray}: a file" in err


def test_the_core_refuses_non_finite_numbers():
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="temperature"):
            GenerationSettings(temperature=bad)
        with pytest.raises(ValueError, match="lr"):
            TrainConfig(lr=bad)
        with pytest.raises(ValueError, match="norm_eps"):
            load_preset("gpt2-toy", norm_eps=bad)


def test_budgets_grow_with_the_run_and_name_the_limit():
    config = load_preset("gpt2-toy")
    short, long = (generation_budget(config, 8, n) for n in (64, 64_000))
    assert long.seconds > 900 * short.seconds and long.bytes > short.bytes
    assert generation_budget(config, 8, 64, rows=8).bytes > short.bytes  # beams multiply the cache and logits
    assert budget_problem(short, "x", 600, 10**12, yes=False) is None
    assert "add --yes" in budget_problem(long, "x", 1e-9, 10**12, yes=False)
    assert budget_problem(long, "x", 1e-9, 10**12, yes=True) is None
    assert "free" in budget_problem(long, "x", 1e9, 10, yes=True)
    train = training_budget(config, 400, 32, 128)
    assert training_budget(config, 800, 32, 128).seconds == pytest.approx(2 * train.seconds)
