"""Train view files (issue 24): `~` expanded and the folder really written named; saving over a checkpoint this
app did not write asks first; a failed save keeps the live model and says so in one line; in a served session
every folder is a name inside the session's own folder."""

from __future__ import annotations

import errno
import os

from app_support import app_for, wait_for
from app_train_support import SIZE, train_view
from textual.widgets import Input

from tui_lab.app.views.train.files import ReplaceCheckpoint
from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.checkpoint import save as checkpoint  # the writing module, patched below
from tui_lab.run_lock import run_lock
from tui_lab.served import ENV, ServedPolicy


def notes(app, title: str) -> list[str]:
    return [str(n.message) for n in app._notifications if n.title == title]


async def ready(pilot):
    app = pilot.app
    await wait_for(pilot, lambda: app.live.model is not None and not app.live.building, 60)
    return await train_view(pilot, {})


async def save_to(pilot, folder: str, title: str, count: int) -> str:
    pilot.app.query_one("#tf-folder", Input).value = folder
    await pilot.press("w")
    await wait_for(pilot, lambda: len(notes(pilot.app, title)) >= count)
    return notes(pilot.app, title)[-1]


async def test_tilde_is_expanded_and_a_foreign_checkpoint_asks_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    app = app_for()  # the shipped toy: a live model with its tokenizer
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        note = await save_to(pilot, "~/kept", "saved", 1)
        assert str(tmp_path / "home" / "kept") in note and (tmp_path / "home" / "kept" / "config.json").exists()
        assert not (tmp_path / "~").exists()  # never a folder named ~ here
        await save_to(pilot, "~/kept", "saved", 2)  # this app's own: no question
        other = tmp_path / "other"
        save_checkpoint(other, app.live.model, app.live.tokenizer, meta={"origin": "someone else"})
        app.query_one("#tf-folder", Input).value = str(other)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplaceCheckpoint))
        assert str(other) in app.screen.text
        await pilot.press("n")
        await pilot.pause(0.3)
        assert load_checkpoint(other).meta["origin"] == "someone else" and len(notes(app, "saved")) == 2
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplaceCheckpoint))
        await pilot.press("y")
        await wait_for(pilot, lambda: len(notes(app, "saved")) == 3)
        assert load_checkpoint(other).meta["origin"] != "someone else"


async def test_a_full_disk_keeps_the_model_and_another_folder_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = checkpoint.save_model

    def full_under_full(model, path, *args, **kwargs):
        if ".full.tmp-" in str(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(model, path, *args, **kwargs)

    monkeypatch.setattr(checkpoint, "save_model", full_under_full)
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        model = app.live.model
        note = await save_to(pilot, "full", "not saved", 1)
        assert "\n" not in note and f"could not save to {tmp_path / 'full'}: No space left on device" in note
        assert "needs about" in note and "another folder" in note and app.live.model is model
        note = await save_to(pilot, "elsewhere", "saved", 1)
        assert str(tmp_path / "elsewhere") in note
        with run_lock(tmp_path / "busy"):  # a `train --resume busy` writing it
            note = await save_to(pilot, "busy", "not saved", 2)
        assert f"checkpoint folder {tmp_path / 'busy'} is in use by process {os.getpid()}" in note


async def test_a_served_session_saves_only_inside_its_folder(tmp_path, monkeypatch):
    home = tmp_path / "root" / "sessions" / "token"
    home.mkdir(parents=True)
    os.symlink(tmp_path, home / "link")
    monkeypatch.chdir(home)
    monkeypatch.setenv(ENV, ServedPolicy(str(home)).to_env())
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        refused = [("../x", "no .."), ("/tmp/x", "no absolute"), ("~/x", "~"), ("link/x", "through a link")]
        for count, (folder, rule) in enumerate(refused, 1):
            note = await save_to(pilot, folder, "error", count)
            assert rule in note and "\n" not in note
        note = await save_to(pilot, "runs/mine", "saved", 1)
        assert str(home / "runs" / "mine") in note and (home / "runs" / "mine" / "config.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]  # nothing written beside the root


async def test_a_served_run_waits_for_a_free_training_slot(tmp_path, monkeypatch):
    from app_train_support import train_view as fill

    from tui_lab.served import training_slot

    home = tmp_path / "sessions" / "token"
    home.mkdir(parents=True)
    monkeypatch.chdir(home)
    other = ServedPolicy(str(tmp_path / "sessions" / "other"), train_slots=1, root=str(tmp_path))
    monkeypatch.setenv(ENV, ServedPolicy(str(home), train_slots=1, root=str(tmp_path)).to_env())
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await fill(pilot)
        with training_slot(other):  # another session's run holds the only slot
            view.action_start(paused=True)
            await wait_for(pilot, lambda: "training slots" in view.message, 30)
        assert "one run per core" in view.message


async def test_a_served_session_saving_to_its_own_folder_keeps_the_folder_and_its_runs(tmp_path, monkeypatch):
    """Issue 37: saving `.` replaced the session folder itself (the app then ran in a deleted folder), and saving
    `runs/keep` then `.` deleted runs/keep. A folder holding a person's files is refused in one line."""
    home = tmp_path / "root" / "sessions" / "token"
    home.mkdir(parents=True)
    monkeypatch.chdir(home)
    monkeypatch.setenv(ENV, ServedPolicy(str(home)).to_env())
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        inode = home.stat().st_ino
        for count, folder in enumerate((".", "runs/keep", "."), 1):
            note = await save_to(pilot, folder, "saved", count)
            assert str(home) in note
        assert home.stat().st_ino == inode and load_checkpoint(home / "runs" / "keep").step == 0
        (home / "mine").mkdir()
        (home / "mine" / "notes.txt").write_text("mine")
        note = await save_to(pilot, "mine", "not saved", 1)
        assert "exists and is not a checkpoint" in note and "\n" not in note
        assert (home / "mine" / "notes.txt").read_text() == "mine" and not (home / "mine" / "config.json").exists()
        await save_to(pilot, "runs/after", "saved", 4)  # the session goes on in its own folder
    assert load_checkpoint(home).step == 0 and (home / "runs" / "after" / "config.json").exists()
