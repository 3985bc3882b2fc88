"""A full disk or a refused write at a save loses no run (issue 24): one line naming the folder, the reason and the
space needed; `tui-lab train` keeps the trained run in a rescue folder it names; the previous checkpoint stays whole.

As root, chmod cannot make a write fail: the failures are injected (ENOSPC / EACCES from the weights' write) or
real (RLIMIT_FSIZE in a child process, where every file past the limit fails with EFBIG).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tui_lab.checkpoint import SaveError, load_checkpoint, save_checkpoint
from tui_lab.checkpoint import save as checkpoint  # the writing module, patched below
from tui_lab.cli import main

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
TINY = ["--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--batch-size", "2", "--seq-len", "16", "--device", "cpu", "--json"]


def failing_under(monkeypatch, folder: Path, code: int) -> None:
    """The weights' write fails with `code` inside `folder`'s temporary write folder only (elsewhere it works)."""
    real = checkpoint.save_model

    def save_model(model, path, *args, **kwargs):
        if Path(path).parent.name.startswith(f".{folder.name}.tmp-"):
            raise OSError(code, os.strerror(code), str(path))
        return real(model, path, *args, **kwargs)

    monkeypatch.setattr(checkpoint, "save_model", save_model)


@pytest.fixture
def first_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TUI_LAB_RESCUE", str(tmp_path / "rescued"))
    out = tmp_path / "ckpt"
    assert main(["train", *TINY, "--steps", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES])
def test_a_refused_final_save_rescues_the_run_and_says_so_in_one_line(first_run, code, capsys, monkeypatch, tmp_path):
    failing_under(monkeypatch, first_run, code)
    assert main(["train", "--resume", str(first_run), "--steps", "4", "--device", "cpu", "--json"]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    error = json.loads(captured.out.strip().splitlines()[-1])
    message = error["message"]
    assert error["event"] == "error" and "\n" not in message
    assert captured.err.strip() == f"tui-lab: error: {message}"  # a refusal's line and exit code (issue 37)
    assert f"could not save to {first_run}: {os.strerror(code)}" in message and "needs about" in message
    rescued = Path(message.split("the run was saved to ")[1].split(" instead")[0])
    assert rescued.parent == tmp_path / "rescued"
    assert load_checkpoint(rescued).step == 4 and load_checkpoint(first_run).step == 2  # nothing lost, nothing torn
    assert main(["train", "--resume", str(rescued), "--steps", "5", "--device", "cpu", "--json"]) == 0  # it goes on


def test_the_human_output_says_it_in_one_line(first_run, capsys, monkeypatch):
    failing_under(monkeypatch, first_run, errno.ENOSPC)
    args = ["train", "--resume", str(first_run), "--steps", "3", "--device", "cpu"]
    assert main(args) == 2  # like every other refusal (issue 37): exit 2, the line on stderr
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "error:" in line]
    assert len(lines) == 1 and "No space left on device" in lines[0] and "saved to" in lines[0]
    assert lines[0].startswith("tui-lab: error: ") and "error:" not in captured.out


def test_save_checkpoint_raises_one_line_and_keeps_the_old_one(first_run, monkeypatch):
    old = load_checkpoint(first_run)
    failing_under(monkeypatch, first_run, errno.ENOSPC)
    with pytest.raises(SaveError, match=rf"could not save to {first_run}: No space left on device \(a checkpoint "
                                        r"needs about .* free there\)"):
        save_checkpoint(first_run, old.model, old.tokenizer)
    assert load_checkpoint(first_run).step == 2 and not list(first_run.parent.glob(".ckpt.tmp-*"))


def _small_files_only() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG, no signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))


@pytest.mark.timeout(120)
def test_a_real_file_size_limit_everywhere_is_one_line_and_the_old_checkpoint_survives(first_run, tmp_path):
    """RLIMIT_FSIZE fails the write for real, the rescue folders too: the line names every place tried."""
    proc = subprocess.run([sys.executable, "-m", "tui_lab.cli", "train", "--resume", str(first_run), "--steps", "3",
                           "--device", "cpu"], env=ENV | {"TUI_LAB_RESCUE": str(tmp_path / "rescued")},
                          capture_output=True, text=True, timeout=110, preexec_fn=_small_files_only)
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and f"could not save to {first_run}: File too large" in lines[0]
    assert "; nor to " in lines[0] and "needs about" in lines[0]
    assert load_checkpoint(first_run).step == 2
