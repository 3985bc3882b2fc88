"""Head detectors (issue 40, what to add 3): heads whose pattern is made, by a hook, exactly a previous-token,
duplicate-token or induction pattern score 1 on their job and 0 on the others; a model with an induction circuit
built from the stripes' definition; `tui-lab heads --json` is the core's table."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.head_detectors import head_scores, repeated_tokens
from tui_lab.model.hooks import attached

T = 12


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = ModelConfig(
        family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=64, dropout=0.0
    )
    return build_model(config).eval()


def stripe(offset: int, length: int) -> torch.Tensor:
    """(2T, 2T): query i puts all its weight on key i + offset (on itself where there is none)."""
    p = torch.zeros(length, length)
    for i in range(length):
        j = i + offset
        p[i, j if 0 <= j <= i else i] = 1.0
    return p


def test_a_head_doing_one_job_exactly_scores_one_on_it_and_zero_on_the_others(model):
    jobs = {0: stripe(-1, 2 * T), 1: stripe(-T, 2 * T), 2: stripe(1 - T, 2 * T)}  # previous, duplicate, induction

    def made(pattern, _):
        pattern = pattern.clone()
        for head, p in jobs.items():
            pattern[:, head] = p
        return pattern

    with attached(model, [("blocks.1.attn.hook_pattern", made)]):
        scores = head_scores(model, seq_len=T, batch=3).scores
    row = {name: scores[name][1] for name in scores}
    assert row["previous"][0] == pytest.approx(1.0) and row["duplicate"][0] == 0 and row["induction"][0] == 0
    assert row["duplicate"][1] == pytest.approx(1.0) and row["previous"][1] == 0 and row["induction"][1] == 0
    assert row["induction"][2] == pytest.approx(1.0) and row["previous"][2] == 0 and row["duplicate"][2] == 0
    untouched = scores["previous"][0][0]  # layer 0 is the model's own: a spread-out random-weight pattern
    assert 0 < untouched < 0.5


def test_the_tokens_repeat_once_without_a_repeat_inside_a_half():
    ids = repeated_tokens(40, T, 4, seed=3)
    assert ids.shape == (4, 2 * T) and torch.equal(ids[:, :T], ids[:, T:])
    assert all(len(set(row[:T].tolist())) == T for row in ids)
    assert not torch.equal(repeated_tokens(40, T, 4, seed=4), ids)


def test_heads_on_the_command_line_and_a_window_too_short(capsys):
    out = run_cli(capsys, "heads", "--preset", "gpt2-toy", "--seq-len", "8", "--batch", "2", "--json")
    data = json.loads(out.stdout)
    from tui_lab.loading import load_model

    expected = head_scores(load_model("preset", "gpt2-toy").model, 8, 2)
    for name in ("previous", "duplicate", "induction"):
        assert torch.allclose(torch.tensor(data[name]), torch.tensor(expected.scores[name]), atol=1e-6)
    assert len(data["heads"]) == 4 * 4 and (data["seq_len"], data["batch"], data["token_seed"]) == (8, 2, 0)
    text = run_cli(capsys, "heads", "--preset", "gpt2-toy", "--seq-len", "8", "--sort", "induction")
    lines = text.stdout.splitlines()
    assert text.returncode == 0 and max(len(line) for line in lines) <= 80 and sum("│ L" in ln for ln in lines) == 16
    shown = [float(line.split("│")[4]) for line in lines if line.startswith("│ L")]
    assert shown == sorted(shown, reverse=True)
    bad = run_cli(capsys, "heads", "--preset", "gpt2-toy", "--seq-len", "200")
    assert bad.returncode == 2 and "past this model's window of 256; use --seq-len 128 or less" in bad.stderr


def test_a_pass_per_row_for_progress_gives_the_batchs_scores(model):
    """The app's progress runs one row a pass: the same rows, the mean of their means, each row reported."""
    steps: list[tuple[int, int]] = []
    stepped = head_scores(model, T, 3, on_step=lambda done, total: steps.append((done, total)))
    whole = head_scores(model, T, 3)
    assert steps == [(1, 3), (2, 3), (3, 3)]
    for name in whole.scores:
        assert torch.allclose(torch.tensor(stepped.scores[name]), torch.tensor(whole.scores[name]), atol=1e-6)
