"""Where the lab writes on a person's machine: exports they asked for, and measurements kept per machine.

Exports never land in the current folder by surprise (it is often a source checkout): they go to
`TUI_LAB_EXPORTS` if set, else `~/tui-lab/exports`. Machine measurements (the matmul peak behind MFU)
are kept in the user's cache folder so they are measured once per machine:
`TUI_LAB_CACHE` if set, else `$XDG_CACHE_HOME/tui-lab`, else `~/.cache/tui-lab`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def exports_dir(create: bool = True) -> Path:
    """The folder exports are written to (created on first use)."""
    folder = Path(os.environ.get("TUI_LAB_EXPORTS") or Path.home() / "tui-lab" / "exports").expanduser()
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def cache_dir(create: bool = True) -> Path:
    """The folder per-machine measurements are kept in (created on first use)."""
    base = os.environ.get("TUI_LAB_CACHE")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = str(Path(xdg) / "tui-lab") if xdg else str(Path.home() / ".cache" / "tui-lab")
    folder = Path(base).expanduser()
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def data_dir() -> Path:
    """The lab's own folder for what it keeps for a person: `TUI_LAB_DATA` if set, else `~/tui-lab`."""
    return Path(os.environ.get("TUI_LAB_DATA") or Path.home() / "tui-lab").expanduser()


def served_root() -> Path:
    """Where `tui-lab serve` keeps its browser sessions' folders by default (never the working folder)."""
    return data_dir() / "served"


def rescue_dir(create: bool = False) -> Path:
    """Where a run goes when its own folder cannot be written (disk full, no permission): `TUI_LAB_RESCUE` if set,
    else `~/tui-lab/rescued` (beside the exports: a place the person owns, never the working folder)."""
    folder = Path(os.environ.get("TUI_LAB_RESCUE") or Path.home() / "tui-lab" / "rescued").expanduser()
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def read_kept(name: str) -> dict[str, dict]:
    """Every entry kept in the cache folder's JSON file `name`, by key ({} when none is kept yet, or the file
    is unreadable: the caller measures again and the next `keep` rewrites it)."""
    try:
        data = json.loads((cache_dir() / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def keep(name: str, key: str, entry: dict) -> None:
    """Keep `entry` (with the time it was measured) under `key` in the cache folder's JSON file `name`, beside
    the other keys. Atomic, since two launches may race; a read-only home keeps nothing, silently (the
    measurement still holds for this process)."""
    try:
        path = cache_dir() / name
        kept = read_kept(name) | {key: entry | {"measured": time.strftime("%Y-%m-%d %H:%M:%S")}}
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
