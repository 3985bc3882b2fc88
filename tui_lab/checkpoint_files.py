"""What a checkpoint folder is made of (the one list of its files) and which folders a save may write into.

A save replaces only these entries of its folder; anything else there (a person's notes, a run saved inside the
run, another program's files) is kept as it is. A folder that would lose something else is refused in one
line instead. Pure path checks: nothing here imports torch, so the CLI refuses a folder before torch loads and
the shipped toys are listed instantly.

A run inside a run (`train --out ck/inner` with `ck` a checkpoint) is allowed: the two runs write disjoint
entries and lock different folders, and a save of `ck` keeps `ck/inner` like any other file it did not write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Every entry a checkpoint writes, the required ones first (tui_lab/checkpoint/ writes and reads them).
CHECKPOINT_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer",
    "meta.json",
    "optimizer.safetensors",
    "train_state.json",
)
REQUIRED = CHECKPOINT_FILES[:3]
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_meta.json")  # what a checkpoint's tokenizer/ holds

# The temporary folders a save writes beside its folder: `.NAME.tmp-XXXX` while it writes the new files,
# `.NAME.old-XXXX` while it moves them in (the replaced entries wait there until the new ones are in).
UNFINISHED = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<key>[A-Za-z0-9_]+)$")


def is_checkpoint(folder: str | Path) -> bool:
    folder = Path(folder)
    return folder.is_dir() and all((folder / name).exists() for name in REQUIRED)


def save_target(folder: str | Path) -> Path:
    """The folder a save to `folder` writes into, links followed (a link stays a link), or one ValueError line:
    the folder is a file, holds things but no checkpoint, or a checkpoint entry holds something a save would
    delete."""
    folder = Path(folder)
    if folder.is_symlink() and not folder.exists():
        raise ValueError(f"{folder} is a link to nothing ({os.readlink(folder)}); give a folder")
    try:
        real = folder.resolve()
    except (OSError, RuntimeError):  # a loop of links
        raise ValueError(f"{folder} cannot be followed to a folder (a loop of links?); give another folder") from None
    inside = next((part for part in real.parts if UNFINISHED.match(part)), None)
    if inside:
        raise ValueError(f"{folder} is inside {inside}, a save's temporary folder; give another folder")
    ancestor = next(place for place in real.parents if place.exists())  # `/` at the latest
    if not ancestor.is_dir():
        raise ValueError(f"{folder} is inside {ancestor}, which is a file; give a folder")
    for above in real.parents:  # a run saved inside a checkpoint's own entry would go with that entry's next save
        entry = real.relative_to(above).parts[0]
        if entry in CHECKPOINT_FILES and is_checkpoint(above):
            raise ValueError(
                f"{folder} is in checkpoint {above}'s own {entry}, which its every save replaces; save beside it"
            )
    if real.exists() and not real.is_dir():
        raise ValueError(f"{folder} is a file; give a new or empty folder, or a checkpoint to overwrite")
    if not real.is_dir():
        return real
    if not is_checkpoint(real) and any(real.iterdir()):
        raise ValueError(f"{folder} exists and is not a checkpoint; pick an empty or new folder")
    for name in CHECKPOINT_FILES:
        problem = _not_replaceable(real / name)
        if problem:
            raise ValueError(
                f"cannot save to {folder}: {problem}, which a save would delete; move it out or save elsewhere"
            )
    return real


def _not_replaceable(entry: Path) -> str | None:
    """Why replacing checkpoint entry `entry` would delete something a checkpoint is not made of, or None."""
    if entry.is_symlink() or not entry.exists():
        return None  # a link goes, never what it points to
    if entry.name != "tokenizer":
        return f"{entry} is a folder, not a checkpoint's file" if entry.is_dir() else None
    if not entry.is_dir():
        return None
    for inside in sorted(entry.iterdir()):
        if inside.name not in TOKENIZER_FILES or (inside.is_dir() and not inside.is_symlink()):
            return f"{entry} holds {inside.name}"
    return None
