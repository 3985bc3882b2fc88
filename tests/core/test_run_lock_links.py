"""The run-folder lock is the folder's, links followed (issue 37): `train --resume k/run` and `train --resume
k/alias` (alias -> run) are one folder, so the second is refused in one line; a save through the link keeps it a
link."""

from __future__ import annotations

import os

import pytest

from tui_lab.checkpoint import load_checkpoint
from tui_lab.cli import main
from tui_lab.run_lock import FolderInUse, lock_path, run_lock

pytestmark = pytest.mark.slow  # trains a real (tiny) run through the CLI

TINY = ["--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--batch-size", "2", "--seq-len", "16", "--device", "cpu", "--json"]


def test_a_link_to_a_locked_folder_is_the_locked_folder(tmp_path):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "run").mkdir()
    (tmp_path / "k" / "alias").symlink_to("run")
    (tmp_path / "k2").symlink_to("k")  # a link higher up: the same folder again
    with run_lock(tmp_path / "k" / "run"):
        for other in (tmp_path / "k" / "alias", tmp_path / "k2" / "run", tmp_path / "k2" / "alias"):
            assert lock_path(other) == lock_path(tmp_path / "k" / "run")
            with pytest.raises(FolderInUse, match=f"is in use by process {os.getpid()}"):
                with run_lock(other):
                    pass
    assert not list((tmp_path / "k").glob(".*"))  # one lock file, gone with its holder


def test_resuming_through_a_link_is_refused_while_the_folder_trains_and_keeps_the_link(tmp_path, capsys):
    run, alias = tmp_path / "k" / "run", tmp_path / "k" / "alias"
    assert main(["train", *TINY, "--steps", "2", "--out", str(run)]) == 0
    alias.symlink_to("run")
    capsys.readouterr()
    with run_lock(run):  # `train --resume k/run` writing it
        assert main(["train", "--resume", str(alias), "--steps", "3", "--device", "cpu", "--json"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"is in use by process {os.getpid()}" in err
    assert main(["train", "--resume", str(alias), "--steps", "3", "--device", "cpu", "--json"]) == 0
    assert alias.is_symlink() and load_checkpoint(run).step == 3
    assert sorted(p.name for p in (tmp_path / "k").iterdir()) == ["alias", "run"]  # no `.alias.old-*`
