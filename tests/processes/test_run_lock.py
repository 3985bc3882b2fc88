"""A run folder is locked while a run writes it (issue 24): a second `train --resume` of it is refused in one line
naming the process; the lock is the kernel's, so a killed run leaves nothing locked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui_lab.cli import main
from tui_lab.run_lock import FolderInUse, lock_path, run_lock

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
TINY = ["--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--batch-size", "2", "--seq-len", "16", "--device", "cpu", "--json"]


def wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_second_holder_is_refused_naming_the_first(tmp_path):
    folder = tmp_path / "run"
    with run_lock(folder):
        with pytest.raises(FolderInUse, match=rf"run folder {folder} is in use by process {os.getpid()}"):
            with run_lock(folder):
                pass
    with run_lock(folder):  # released at the end of the block
        pass
    assert not lock_path(folder).exists()  # and no lock file left behind


def test_a_killed_holder_releases_the_folder(tmp_path):
    folder = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom tui_lab.run_lock import run_lock\n"
                               f"with run_lock({str(folder)!r}):\n    time.sleep(600)"], env=ENV)
    try:
        wait_for(lock_path(folder))
        with pytest.raises(FolderInUse, match=f"process {holder.pid}"):
            with run_lock(folder):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    with run_lock(folder):  # kill -9 left the file, not the lock
        pass


@pytest.mark.timeout(180)
def test_a_second_resume_is_refused_in_one_line_naming_the_process(tmp_path, capsys):
    out = tmp_path / "ckpt"
    assert main(["train", *TINY, "--steps", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    first = subprocess.Popen([sys.executable, "-m", "tui_lab.cli", "train", "--resume", str(out), "--steps", "100000",
                              "--device", "cpu", "--json", "--yes"], env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lock_path(out))
        assert main(["train", "--resume", str(out), "--steps", "4", "--device", "cpu", "--json"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"is in use by process {first.pid}" in err and str(out) in err
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert main(["train", "--resume", str(out), "--steps", "3", "--device", "cpu", "--json"]) == 0  # free again
