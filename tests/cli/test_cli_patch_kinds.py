"""`tui-lab patch --kind/--metric/--receiver` on the shipped English toy: the core's numbers, the warning line
when the clean-corrupt gap cannot carry a recovery (issue 40 item 5), and tables whole at 80 columns."""

from __future__ import annotations

import json
import re

import pytest
import torch
from cli_support import run_cli

from tui_lab.loading import load_model
from tui_lab.mechanism.patching import PatchMetric, activation_patching
from tui_lab.mechanism.path_patching import path_patching

TOY = ["--preset", "gpt2-toy-english"]
CLEAN, CORRUPT = "Anna walked to the river. Tom walked to the", "Anna walked to the hill. Tom walked to the"
PAIR = ["--prompt", CLEAN, "--corrupt", CORRUPT]


@pytest.fixture(scope="module")
def toy():
    loaded = load_model("preset", "gpt2-toy-english")
    ids = {text: torch.tensor(loaded.codec.encode(text)) for text in (CLEAN, CORRUPT)}
    return loaded, ids[CLEAN], ids[CORRUPT], loaded.codec.encode(" river")[0], loaded.codec.encode(" hill")[0]


def _json(capsys, *args: str) -> dict:
    out = run_cli(capsys, *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("kind, metric", [("z", "logit_diff"), ("mlp_out", "loss"), ("pattern", "logit")])
def test_each_kind_and_metric_is_the_cores(capsys, toy, kind, metric):
    loaded, clean, corrupt, river, hill = toy
    data = _json(
        capsys, "patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill", "--kind", kind, "--metric", metric
    )
    table = activation_patching(loaded.model, clean, corrupt, PatchMetric(metric, river, hill), kind)
    assert torch.allclose(torch.tensor(data["recovery"]), torch.tensor(table.values), atol=1e-6)
    assert (data["kind"], data["metric"], data["columns"]) == (kind, metric, table.columns)


def test_path_patching_to_a_receivers_value(capsys, toy):
    loaded, clean, corrupt, river, hill = toy
    data = _json(
        capsys,
        "patch",
        *TOY,
        *PAIR,
        "--answer",
        " river",
        "--wrong",
        " hill",
        "--kind",
        "path",
        "--receiver",
        "L2H1",
        "--receiver-input",
        "v",
    )
    table = path_patching(loaded.model, clean, corrupt, PatchMetric("logit_diff", river, hill), (2, 1), ("v",))
    assert torch.allclose(torch.tensor(data["recovery"]), torch.tensor(table.values), atol=1e-6)
    assert data["kind"] == "path L2H1 v" and len(data["recovery"]) == 2
    bad = run_cli(capsys, "patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill", "--kind", "path")
    assert bad.returncode == 2 and "--kind path needs --receiver L<layer>H<head>" in bad.stderr


@pytest.mark.parametrize(
    "corrupt, expected",
    [
        (
            "Anna walked to the school. Tom walked to the",
            "warning: the clean-corrupt gap in logit difference is only 0.20",
        ),
        ("Anna walked to the river. Tom walked to a", "warning: the corrupted prompt's logit difference is not worse"),
    ],
)
def test_a_small_or_wrong_signed_gap_is_warned_in_one_line(capsys, corrupt, expected):
    """Recoveries divided by a gap of 0.20 (or one of the wrong sign, -2.59) came back without a word; now one
    warning line under the table and a `warning` field in the JSON."""
    args = ["patch", *TOY, "--prompt", CLEAN, "--corrupt", corrupt, "--answer", " river", "--wrong", " hill"]
    data = _json(capsys, *args)
    assert data["warning"].startswith(expected)
    text = run_cli(capsys, *args)
    warned = [line for line in text.stdout.splitlines() if "warning" in line]
    assert text.returncode == 0 and warned == [data["warning"]]
    fine = _json(capsys, "patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill")
    assert fine["warning"] is None  # a gap of 1.88 in the logit difference, the right sign


def test_a_ten_token_table_stays_whole_at_80_columns(capsys):
    loaded = load_model("preset", "gpt2-toy-english")
    out = run_cli(capsys, "patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill")
    body = [line for line in out.stdout.splitlines() if not line.startswith("warning")]
    assert out.returncode == 0 and max(len(line) for line in body) <= 80
    data = _json(capsys, "patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill")
    shown = re.findall(r"-?\d+\.\d\d(?!\d)", "\n".join(line for line in body if line.startswith("│")))
    expected = [f"{v:.2f}" for layer in range(4) for v in data["recovery"][layer]]
    assert sorted(shown) == sorted(expected)  # every number, whole, once
    assert len(loaded.codec.encode(CLEAN)) == 10


def test_attribution_patching_on_the_command_line(capsys, toy):
    from tui_lab.mechanism.attribution_patching import attribution_patching

    loaded, clean, corrupt, river, hill = toy
    args = ["patch", *TOY, *PAIR, "--answer", " river", "--wrong", " hill", "--kind", "z", "--method", "attribution"]
    data = _json(capsys, *args)
    table = attribution_patching(loaded.model, clean, corrupt, PatchMetric("logit_diff", river, hill), "z")
    assert torch.allclose(torch.tensor(data["recovery"]), torch.tensor(table.values), atol=1e-6)
    assert data["kind"] == "attribution z" and data["columns"] == "head"
    bad = run_cli(capsys, *args[:-4], "--kind", "path", "--receiver", "L1H0", "--method", "attribution")
    assert bad.returncode == 2 and "--method attribution covers the points of --kind, not path" in bad.stderr
