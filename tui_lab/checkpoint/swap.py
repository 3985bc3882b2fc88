"""Moving a written checkpoint into its folder, entry by entry, so that a crash at any point leaves either the old
checkpoint or a move the next `settle` finishes; and `settle` itself. Paths and locks only (no torch)."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tui_lab.checkpoint_files import CHECKPOINT_FILES, UNFINISHED, is_checkpoint


@contextmanager
def temp_folder(real: Path) -> Iterator[Path]:
    """A new `.NAME.tmp-KEY` beside `real`, flocked while this save writes it, so that `settle` in another
    process can tell a live write from a crashed one (the kernel drops the lock however the writer ends)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.tmp-", dir=real.parent))
    # A settle in another process that opens it before this lock (microseconds) finds it empty and removes it: this
    # save then fails in one line, and nothing else is lost.
    fd = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield tmp
    except BaseException:
        if not _old_of(tmp).exists():  # still writing: the old checkpoint stands, the half-written one goes
            shutil.rmtree(tmp, ignore_errors=True)
        raise  # mid-move: the new entries are whole, and the next settle finishes moving them in
    finally:
        os.close(fd)


def _old_of(tmp: Path) -> Path:
    return tmp.with_name(tmp.name.replace(".tmp-", ".old-", 1))


def move_in(tmp: Path, real: Path) -> None:
    """Put the finished entries in `tmp` into `real`: a new folder by one rename, an existing one entry by entry
    (its own checkpoint entries moved aside first, everything else left where it is)."""
    if not os.path.lexists(real):
        tmp.rename(real)
        return
    old = _old_of(tmp)
    old.mkdir()  # from here on the new entries are whole: a crash is finished forward, never undone
    _finish(tmp, real, old)


def _finish(tmp: Path, real: Path, old: Path) -> None:
    # config.json moves in first: while it is still in `tmp`, none of the new entries is in `real` yet, so every
    # checkpoint entry there is an old one (a crash before this line leaves some of them still to move aside).
    if (tmp / "config.json").exists():
        for name in CHECKPOINT_FILES:
            if os.path.lexists(real / name):
                (real / name).rename(old / name)
    real.mkdir(parents=True, exist_ok=True)
    for name in sorted(os.listdir(tmp), key=lambda name: name != "config.json"):
        if name in CHECKPOINT_FILES:  # a save writes nothing else; a rename never replaces any other entry
            (tmp / name).rename(real / name)
    shutil.rmtree(tmp)
    shutil.rmtree(old, ignore_errors=True)


def settle(folder: str | Path) -> None:
    """Finish or drop what crashed saves left beside `folder`: moves cut short are finished, half-written
    temporary folders removed. Only the save's own `.NAME.tmp-KEY` / `.NAME.old-KEY` folders are touched, and
    none a live save is writing (its flock). A checkpoint left aside by a crash of an older version's whole-folder
    swap is put back."""
    try:
        real = Path(folder).resolve()
        entries = list(os.scandir(real.parent))
    except (OSError, RuntimeError):  # no such parent, not readable, a loop of links: nothing of ours to settle
        return
    leftovers = {}
    for entry in entries:
        match = UNFINISHED.match(entry.name)
        if match and match["name"] == real.name and entry.is_dir(follow_symlinks=False):
            leftovers[(match["kind"], match["key"])] = Path(entry.path)
    _put_back(real, [path for (kind, key), path in leftovers.items() if kind == "old" and ("tmp", key) not in
                     leftovers])
    for (kind, key), path in leftovers.items():
        if kind == "tmp":
            _settle_one(path, real, leftovers.get(("old", key)))
        elif ("tmp", key) not in leftovers:
            shutil.rmtree(path, ignore_errors=True)  # the moves were done; only the replaced entries were left


def _settle_one(tmp: Path, real: Path, old: Path | None) -> None:
    try:
        fd = os.open(tmp, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return  # a live save is writing it
    try:
        if old is None:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            _finish(tmp, real, old)
    except OSError:
        pass  # a read-only place, the folder gone: left as it is for a later settle, the load goes on
    finally:
        os.close(fd)


def _put_back(real: Path, olds: list[Path]) -> None:
    """Before entry-wise saves, a save renamed the whole folder aside and the new one in: a crash between the two
    renames left only the old copy."""
    if os.path.lexists(real) or not olds:
        return
    newest = max(olds, key=lambda p: p.stat().st_mtime)
    if is_checkpoint(newest):
        try:
            newest.rename(real)
        except OSError:
            pass  # the load then says the folder does not exist
