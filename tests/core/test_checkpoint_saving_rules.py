"""Saving never deletes what the lab did not write (issue 37): a save replaces only a checkpoint's own entries
(`tui_lab.checkpoint_files.CHECKPOINT_FILES`) and keeps everything else in its folder, or refuses in one line and
changes nothing; a save killed mid-way is settled at the folder's next start, load or save."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from train_helpers import tiny_lm

from tui_lab.checkpoint import SaveRefused, load_checkpoint, save_checkpoint
from tui_lab.checkpoint import save as checkpoint  # the writing module, patched below
from tui_lab.checkpoint_files import CHECKPOINT_FILES
from tui_lab.cli import main
from tui_lab.data import char_tokenizer
from tui_lab.model import build_model

ROOT = Path(__file__).resolve().parents[2]
# The source tree and the tests' helpers (tests/support) for the child that saves.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "tests" / "support"),
                                                                 os.environ.get("PYTHONPATH")])))
TINY = ["--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--batch-size", "2", "--seq-len", "16", "--device", "cpu", "--json"]
TOKENIZER = char_tokenizer("abcdefghijklmnop")


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under `root`, links unfollowed: a file's bytes, a link's target, a folder's marker."""
    found: dict[str, bytes | str] = {}
    for base, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(base) / name
            key = str(path.relative_to(root))
            found[key] = (f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir()
                          else path.read_bytes())
    return found


def save(folder: Path, version: int, resumable: bool = False) -> Path:
    state = {"step": version} if resumable else None
    return save_checkpoint(folder, build_model(tiny_lm(vocab=20)), TOKENIZER, state, meta={"version": version})


@pytest.mark.slow  # trains a real (tiny) run through the CLI
def test_resuming_a_run_keeps_a_run_inside_it_and_a_note(tmp_path, capsys):
    """The issue's case: `train --out ck`, `train --out ck/inner` (allowed), a note in ck/, `train --resume ck`."""
    ck = tmp_path / "ck"
    assert main(["train", *TINY, "--steps", "2", "--out", str(ck)]) == 0
    assert main(["train", *TINY, "--steps", "2", "--out", str(ck / "inner")]) == 0
    (ck / "note.txt").write_text("mine")
    inode = ck.stat().st_ino
    assert main(["train", "--resume", str(ck), "--steps", "3", "--device", "cpu", "--json"]) == 0
    capsys.readouterr()
    assert (ck / "note.txt").read_text() == "mine" and load_checkpoint(ck / "inner").step == 2
    assert load_checkpoint(ck).step == 3 and ck.stat().st_ino == inode  # written in place, never swapped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]  # no temporary folder left beside it


def test_a_save_over_a_checkpoint_replaces_its_entries_and_keeps_the_rest(tmp_path):
    ck, outside = tmp_path / "ck", tmp_path / "outside.txt"
    outside.write_text("not the lab's")
    save(ck, 1, resumable=True)
    (ck / "notes").mkdir()
    (ck / "notes" / "a.txt").write_text("a")
    (ck / "link-out").symlink_to(outside)
    (ck / "train_state.json").unlink()
    (ck / "train_state.json").symlink_to(outside)  # a checkpoint entry that is a link: the link goes, not its file
    kept = {k: v for k, v in tree(ck).items() if k.split("/")[0] not in CHECKPOINT_FILES}
    save(ck, 2)  # the live model over a resumable run: its training state goes with it
    assert {k: v for k, v in tree(ck).items() if k.split("/")[0] not in CHECKPOINT_FILES} == kept
    assert outside.read_text() == "not the lab's" and not (ck / "train_state.json").exists()
    assert load_checkpoint(ck).meta == {"version": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck", "outside.txt"]


def test_a_save_through_a_link_writes_the_folder_and_keeps_the_link(tmp_path):
    save(tmp_path / "run", 1)
    (tmp_path / "alias").symlink_to("run")
    save(tmp_path / "alias", 2)
    assert (tmp_path / "alias").is_symlink() and load_checkpoint(tmp_path / "run").meta == {"version": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias", "run"]  # no `.alias.old-*` left


def _foreign_in_tokenizer(folder: Path) -> None:
    save(folder, 1)
    (folder / "tokenizer" / "mine.txt").write_text("mine")


def _folder_named_like_an_entry(folder: Path) -> None:
    save(folder, 1)
    (folder / "meta.json").unlink()
    (folder / "meta.json").mkdir()
    (folder / "meta.json" / "mine.txt").write_text("mine")


def _not_a_checkpoint(folder: Path) -> None:
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # a file of the same name as a checkpoint's, in someone's folder
    (folder / "data.csv").write_text("1,2")


def _a_file(folder: Path) -> None:
    folder.write_text("mine")


def _a_link_to_nothing(folder: Path) -> None:
    folder.symlink_to(folder.parent / "nowhere")


REFUSED = {
    "a foreign file in tokenizer/": (_foreign_in_tokenizer, "tokenizer holds mine.txt, which a save would delete"),
    "a folder named like an entry": (_folder_named_like_an_entry, "meta.json is a folder, not a checkpoint's file"),
    "not a checkpoint": (_not_a_checkpoint, "exists and is not a checkpoint"),
    "a file": (_a_file, "is a file"),
    "a link to nothing": (_a_link_to_nothing, "is a link to nothing"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_save_that_would_delete_something_is_refused_in_one_line_and_changes_nothing(case, tmp_path):
    make, needle = REFUSED[case]
    make(tmp_path / "ck")
    before = tree(tmp_path)
    with pytest.raises(SaveRefused) as caught:
        save(tmp_path / "ck", 2)
    assert needle in str(caught.value) and len(str(caught.value).splitlines()) == 1, str(caught.value)
    assert tree(tmp_path) == before


@pytest.mark.slow  # trains a real (tiny) run through the CLI
def test_the_command_line_refuses_such_a_folder_before_training(tmp_path, capsys):
    ck = tmp_path / "ck"
    assert main(["train", *TINY, "--steps", "2", "--out", str(ck)]) == 0
    (ck / "tokenizer" / "mine.txt").write_text("mine")
    capsys.readouterr()
    assert main(["train", "--resume", str(ck), "--steps", "3", "--device", "cpu", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "--resume: " in captured.err and "tokenizer holds mine.txt" in captured.err
    assert load_checkpoint(ck).step == 2 and (ck / "tokenizer" / "mine.txt").read_text() == "mine"


@pytest.mark.parametrize("crash_at", range(1, 11))  # 6 old entries moved aside, then 4 new ones moved in
def test_a_save_cut_short_while_moving_is_finished_at_the_next_load(crash_at, tmp_path, monkeypatch):
    ck = tmp_path / "ck"
    save(ck, 1, resumable=True)
    (ck / "optimizer.safetensors").write_bytes(b"x")  # all six entries, so the aside moves count six
    (ck / "note.txt").write_text("mine")
    real_rename, moves = Path.rename, []

    def rename(self, target):
        if Path(target).parent == ck or Path(target).parent.name.startswith(".ck.old-"):
            moves.append(self.name)
            if len(moves) == crash_at:
                raise KeyboardInterrupt  # a process that dies here (kill -9) leaves what one in mid-move leaves
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        save(ck, 2)
    monkeypatch.setattr(Path, "rename", real_rename)
    assert len(list(tmp_path.glob(".ck.*"))) == 2  # the finished new entries and the replaced ones wait
    assert load_checkpoint(ck).meta == {"version": 2}  # finished forward: the new entries were whole
    assert sorted(p.name for p in ck.iterdir()) == ["config.json", "meta.json", "model.safetensors", "note.txt",
                                                    "tokenizer"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


HOLD_MID_SAVE = """
import sys, time
from pathlib import Path
from tui_lab.checkpoint import save as checkpoint  # the writing module, patched below
from tui_lab.data import char_tokenizer
from tui_lab.model import build_model
from train_helpers import tiny_lm

write_json = checkpoint._write_json
def slow(path, data):
    write_json(path, data)
    if path.name == "config.json":
        print("writing", flush=True)
        time.sleep(600)  # killed here, mid-write
checkpoint._write_json = slow
checkpoint.save_checkpoint(sys.argv[1], build_model(tiny_lm(vocab=20)), char_tokenizer("abcdefghijklmnop"))
"""


@pytest.mark.slow  # trains a real (tiny) run and kills a saving process
@pytest.mark.timeout(120)
def test_a_save_killed_mid_write_is_cleaned_at_the_next_start_but_a_live_one_is_not(tmp_path, capsys):
    ck = tmp_path / "ck"
    assert main(["train", *TINY, "--steps", "2", "--out", str(ck)]) == 0
    writer = subprocess.Popen([sys.executable, "-c", HOLD_MID_SAVE, str(ck)], env=ENV, cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "writing"
        (tmp,) = tmp_path.glob(".ck.tmp-*")
        checkpoint.settle(ck)  # another process settling the folder leaves a live save's folder alone
        assert tmp.is_dir() and (tmp / "config.json").exists()
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    assert tmp.is_dir()  # kill -9: nothing of the writer's ran after this
    # The next start of the run, even one refused before its first step, clears it.
    assert main(["train", "--resume", str(ck), "--steps", "10000000000", "--device", "cpu", "--json"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"] and load_checkpoint(ck).step == 2


def test_a_served_session_saved_to_its_own_folder_keeps_the_folder_and_its_runs(tmp_path, monkeypatch):
    """Saving `.` in a session used to replace the session folder itself (the app then ran in a deleted folder),
    and saving `runs/keep` then `.` deleted runs/keep. The app's own saver, as its worker runs it."""
    from tui_lab.app.views.train.files import TrainFiles, target_folder
    from tui_lab.served import ENV as SERVED
    from tui_lab.served import ServedPolicy

    home = tmp_path / "sessions" / "token"
    home.mkdir(parents=True)
    monkeypatch.chdir(home)
    monkeypatch.setenv(SERVED, ServedPolicy(str(home)).to_env())
    posted = []
    files = TrainFiles(type("Host", (), {"post_message": lambda self, message: posted.append(message)})(), None, None)
    inode, model = home.stat().st_ino, build_model(tiny_lm(vocab=20))
    for folder in (".", "runs/keep", "."):
        files._save_live(model, TOKENIZER, "a test", str(target_folder(folder)))
        assert posted[-1].error is None, posted[-1].error
    assert home.stat().st_ino == inode and Path.cwd() == home.resolve()  # the session's folder is the one it was
    assert load_checkpoint(home / "runs" / "keep").meta == {"origin": "a test"}
    (home / "exports").mkdir()
    (home / "exports" / "loss.csv").write_text("step,loss")
    files._save_live(model, TOKENIZER, "a test", str(target_folder(".")))
    assert posted[-1].error is None and (home / "exports" / "loss.csv").read_text() == "step,loss"


def test_a_run_inside_a_checkpoints_own_entry_is_refused(tmp_path):
    """`ck/inner` is allowed (kept by every save of ck); `ck/tokenizer/x` would go with ck's next save."""
    save(tmp_path / "ck", 1)
    save(tmp_path / "ck" / "inner", 1)
    with pytest.raises(SaveRefused, match=r"ck/tokenizer/x is in checkpoint .*ck's own tokenizer, which its every "
                                          r"save replaces; save beside it$"):
        save(tmp_path / "ck" / "tokenizer" / "x", 1)
    assert not (tmp_path / "ck" / "tokenizer" / "x").exists()
    save(tmp_path / "ck", 2)
    assert load_checkpoint(tmp_path / "ck" / "inner").meta == {"version": 1}
