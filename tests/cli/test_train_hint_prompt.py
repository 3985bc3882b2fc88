"""Defect 6 of issue 36: `train --task numbers-de` closes with a generate command whose prompt the trained model
translates right (checked greedily, and the command decodes greedily), or says the model is undertrained."""

from __future__ import annotations

import json
import re
import shlex

from cli_support import run_cli

from tui_lab.cli.train import right_prompt
from tui_lab.data.tasks import load_task
from tui_lab.loading import load_model
from tui_lab.shipped import shipped_checkpoint
from tui_lab.train.sources import Seq2SeqSource

TOY = "transformer-2017-toy-numbers-de"


def test_the_hint_prompt_is_one_the_model_translates_right(capsys):
    """On the shipped trained toy: the prompt chosen comes out as its target through the printed command's own
    path (`generate --temperature 0`); the old hint's 'zero' does not (it gave 'fünfzig')."""
    folder = str(shipped_checkpoint(TOY))
    model = load_model("preset", TOY).model
    prompt = right_prompt(Seq2SeqSource(load_task("numbers-de")), model, "cpu")
    assert prompt is not None
    targets = dict(load_task("numbers-de").examples("val"))
    for source, right in ((prompt, True), ("zero", False)):
        out = run_cli(capsys, "generate", "--checkpoint", folder, "--prompt", source, "--temperature", "0", "--json")
        assert out.returncode == 0, out.stderr
        assert (json.loads(out.stdout)["completion"] == targets[source]) is right, (source, out.stdout)


def test_an_undertrained_run_says_so_instead_of_a_wrong_prompt(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    done = run_cli(capsys, "train", "--task", "numbers-de", "--steps", "1", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("saved to"))
    assert "undertrained: none of 64 held-out sources comes out right yet" in line and "generate" not in line
    resume = re.search(r"train on to N steps in all: (tui-lab train .+ --steps N)\)", line).group(1)
    assert shlex.split(resume)[1:3] == ["train", "--resume"]
