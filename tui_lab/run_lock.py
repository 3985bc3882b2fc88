"""One run writes a run folder at a time: an OS lock (flock) beside the folder, released by the kernel when the
holder ends, even by `kill -9`, so a crashed run never leaves a folder locked.

The lock file is `.<name>.lock` in the folder's parent, not inside it: a new folder comes into being by one
rename of the save's temporary folder (checkpoint/swap.py), after the lock was taken. It is the lock of the folder
itself, links followed: `k/alias` (a link to `k/run`) and `k/run` are one folder with one lock. It holds the
holder's process id and command line, so a refused run can say which process has the folder.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class FolderInUse(ValueError):
    """Another live process holds the folder's lock (one line naming it)."""


def lock_path(folder: str | Path) -> Path:
    folder = Path(folder).resolve()
    return folder.parent / f".{folder.name}.lock"


@contextmanager
def run_lock(folder: str | Path, what: str = "run folder") -> Iterator[Path]:
    """Hold the lock of `folder` for the block; FolderInUse at once if another process holds it."""
    path = lock_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _acquire(path, Path(folder), what)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {' '.join(sys.argv) or sys.executable}\n".encode())
        yield path
    finally:
        try:
            path.unlink()  # while still held: a process waiting on this inode then retries on a fresh file
        except FileNotFoundError:
            pass
        os.close(fd)  # closing releases the flock


def _acquire(path: Path, folder: Path, what: str) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise FolderInUse(f"{what} {folder} is in use by {holder}; wait for it to finish or stop it") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder unlinked it as we locked: lock the new file instead


def _holder(fd: int) -> str:
    text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    pid, _, command = text.partition(" ")
    if not pid.isdigit():
        return "another process"
    return f"process {pid} ({command[:120]})" if command else f"process {pid}"
