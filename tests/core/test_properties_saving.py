"""The saving rules as a property (issue 37): random folder trees (the lab's checkpoints, a person's files and
folders, links pointing in and out of the tree, nesting), then saves and resumes aimed anywhere in them. Whatever
the lab did not write is never deleted or overwritten, every refusal is one line, and no save leaves its
temporary folders behind.

A save is what `train --out` does (the folder's lock, then `save_checkpoint`); a resume what `train --resume`
does (the lock, `load_checkpoint`, then a resumable save back). A tiny model: the whole property runs in seconds.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st
from train_helpers import tiny_lm

from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.checkpoint_files import UNFINISHED, save_target
from tui_lab.data import char_tokenizer
from tui_lab.model import build_model
from tui_lab.run_lock import run_lock

MODEL, TOKENIZER = build_model(tiny_lm(vocab=20)), char_tokenizer("abcdefghijklmnop")
FOLDERS = ("ck", "inner", "a")  # a checkpoint's own names never name a person's file: in a checkpoint they are its
LINKS = ("alias", "out")
FILES = ("note.txt", "data.csv")

# Mostly the places where runs nest and links lead; any path of those names now and then.
place = st.one_of(st.sampled_from([".", "ck", "ck/inner", "a/ck", "alias", "ck/alias", "out/ck", "a"]),
                  st.lists(st.sampled_from(FOLDERS + LINKS), max_size=3).map(lambda parts: "/".join(parts) or "."))
link_to = st.one_of(st.sampled_from(["../outside", "../../outside", "../outside/keep.txt", "nowhere", ".", ".."]),
                    place)
building = st.lists(st.one_of(
    st.tuples(st.just("checkpoint"), place),
    st.tuples(st.just("checkpoint"), place),
    st.tuples(st.just("file"), place, st.sampled_from(FILES), st.binary(max_size=6)),
    st.tuples(st.just("folder"), place, st.sampled_from(FOLDERS)),
    st.tuples(st.just("link"), place, st.sampled_from(LINKS), link_to),
), max_size=8).flatmap(lambda rest: st.tuples(st.just("checkpoint"), place).map(lambda first: [first, *rest]))
acting = st.lists(st.tuples(st.sampled_from(["save", "resume"]),
                            st.one_of(place, st.tuples(place, st.sampled_from(FILES)).map("/".join))),
                  min_size=1, max_size=4)


def lab_save(target: Path, resumable: bool) -> None:
    if resumable and not target.is_dir():  # train's own checks before it takes the lock
        raise ValueError(f"--resume {target}: not a folder")
    save_target(target)
    with run_lock(target, "run folder"):
        if resumable:
            loaded = load_checkpoint(target)
            save_checkpoint(target, loaded.model, loaded.tokenizer, {"step": loaded.step + 1}, {"resumed": True})
        else:
            save_checkpoint(target, MODEL, TOKENIZER, meta={"origin": "property"})


def build(base: Path, step: tuple) -> tuple[str, Path] | None:
    """Apply one step; returns the person's new entry (kind, where it really lives), or None."""
    kind, where = step[0], base / step[1]
    try:
        if kind == "checkpoint":
            lab_save(where, resumable=False)
            return None
        entry = where / step[2]
        entry = Path(os.path.realpath(entry.parent)) / entry.name  # a link followed: where it really is
        if kind == "file":
            entry.parent.mkdir(parents=True, exist_ok=True)
            with open(entry, "xb") as f:
                f.write(step[3])
        elif kind == "folder":
            entry.mkdir(parents=True)
        else:
            entry.parent.mkdir(parents=True, exist_ok=True)
            entry.symlink_to(step[3])
    except (OSError, ValueError):
        return None  # a step the tree cannot take (a name taken, a file on the way, a folder refused)
    return kind, entry


def snapshot(entries: list[tuple[str, Path]]) -> dict[Path, bytes | str]:
    def state(kind: str, path: Path) -> bytes | str:
        if kind == "link":
            return os.readlink(path) if path.is_symlink() else "gone"
        if path.is_symlink():
            return "replaced by a link"
        if kind == "folder":
            return "folder" if path.is_dir() else "gone"
        return path.read_bytes() if path.is_file() else "gone"

    return {path: state(kind, path) for kind, path in entries}


def leftovers(root: Path) -> list[str]:
    return [name for _, folders, files in os.walk(root) for name in folders + files if UNFINISHED.match(name)]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(steps=building, actions=acting)
def test_nothing_the_lab_did_not_write_is_deleted_or_overwritten(steps, actions):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        base, outside = root / "tree", root / "outside"
        base.mkdir()
        outside.mkdir()
        (outside / "keep.txt").write_text("outside")
        mine = [("folder", outside), ("file", outside / "keep.txt")]
        mine += [entry for entry in (build(base, step) for step in steps) if entry is not None]
        for action, target in actions:
            before = snapshot(mine)
            try:
                lab_save(base / target, resumable=action == "resume")
                real = Path(os.path.realpath(base / target))
                kept = any(path.is_relative_to(real) for _, path in mine)
                event(f"{action}: done" + (", beside a person's entries" if kept else ""))
            except ValueError as refused:  # SaveRefused, FolderInUse, a load's refusal: all ValueError
                message = str(refused)
                assert message and len(message.splitlines()) == 1, message
                event(f"{action}: refused")
            assert snapshot(mine) == before, (action, target)
            assert not leftovers(root), (action, target)
