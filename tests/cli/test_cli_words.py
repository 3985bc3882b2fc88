"""Words that run: what the lab prints for a person to type or paste works as printed.

`train`'s closing line names commands that run as printed; --help names every Hugging Face model type
--from-hf opens. (`tui-lab presets` in an 80-column terminal: tests/walk/test_walk_words.py.)
"""

from __future__ import annotations

import re
import shlex

from cli_support import run_cli

from tui_lab.cli import HF_MODEL_TYPES


def test_train_closing_commands_run_as_printed(tmp_path, capsys, monkeypatch):
    """The done line's `generate:` and `train on` commands, pasted as printed (N the person's number)."""
    monkeypatch.setenv("COLUMNS", "300")  # one line each, as a wide terminal shows them
    # Two steps translate nothing right (the hint then says undertrained, test_train_hint_prompt.py): stand in
    # for the check with a held-out source whose quoting the pasted command must survive.
    monkeypatch.setattr("tui_lab.cli.train.right_prompt", lambda *_: "twenty 'one'")
    folder = tmp_path / "a run"  # a space: the printed command must quote it
    done = run_cli(capsys, "train", "--task", "numbers-de", "--steps", "2", "--out", str(folder))
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("saved to"))
    generate = re.search(r"generate: (tui-lab generate [^;]+);", line).group(1)
    resume = re.search(r"train on to N steps in all: (tui-lab train .+ --steps N)\)", line).group(1)
    for printed in (generate, resume.replace(" N", " 3")):
        argv = shlex.split(printed)
        assert argv[0] == "tui-lab"
        ran = run_cli(capsys, *argv[1:])
        assert ran.returncode == 0, (printed, ran.stderr)


def test_help_names_every_model_type_from_hf_opens(capsys, monkeypatch):
    from tui_lab.hf.families import FAMILIES

    assert set(HF_MODEL_TYPES) == set(FAMILIES)
    monkeypatch.setenv("COLUMNS", "300")
    out = run_cli(capsys, "--help").stdout
    help_line = next(line for line in out.splitlines() if line.strip().startswith("--from-hf"))  # the option's
    assert "GPT-2 folder" not in help_line
    for kind in FAMILIES:
        assert re.search(rf"\b{kind}\b", help_line), (kind, help_line)
