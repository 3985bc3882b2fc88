"""A run kept as it goes: its resumable checkpoint rewritten every `every_s` at a step boundary, and once more when
the run stops, so a trainer process that is ended (a served session closed, the server stopped) loses at most the
last interval.

Written by the trainer itself (tui_lab/train/process_child.py) through the lab's checkpoint writer, which is atomic:
a process killed mid-write leaves the previous kept checkpoint whole. A served session keeps its run in its own
`kept-run/` within its quota (tui_lab/app/autosave.py: `check_room` is its policy's check): a write that would pass
it is skipped, said once. The app, started again for that session, says where the run is (`kept_note`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEEP_EVERY_S = 60.0  # a running run's resumable checkpoint is rewritten this often (what an ended process loses)
KEPT = "kept-run"  # a served session's folder for it
KEPT_META = "kept"  # meta.json's key: the wall time it was kept (a checkpoint this module wrote)


@dataclass
class Keeper:
    """Keeps one trainer's run in `folder`. `due` and `final` are called by the training thread between steps."""

    folder: Path
    every_s: float = KEEP_EVERY_S
    check_room: Callable[[int, str], None] | None = None  # (bytes, what): one ValueError line when they do not fit
    kept_step: int = -1  # the step the folder holds (-1: none written yet)
    error: str | None = None  # why the last write was skipped, once said

    def __post_init__(self) -> None:
        self._next = time.monotonic() + self.every_s

    def due(self, trainer: Any) -> str | None:
        """Write when the interval has passed; returns a skipped write's reason the first time it happens."""
        if time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + self.every_s
        return self._keep(trainer)

    def final(self, trainer: Any) -> str | None:
        """The run stopped or ended: keep its last step unless the folder already holds it."""
        return self._keep(trainer)

    def _keep(self, trainer: Any) -> str | None:
        if trainer.step_count == self.kept_step or trainer.step_count == 0:
            return None  # nothing trained since: the folder holds these weights (or only the starting ones)
        from tui_lab.train.state import save_trainer

        try:
            self._check_room(trainer.model)
            save_trainer(trainer, self.folder, {KEPT_META: time.strftime("%Y-%m-%d %H:%M")})
        except Exception as err:  # noqa: BLE001 - the run goes on; the reason is said once
            from tui_lab.errors import one_line

            first = self.error is None
            self.error = one_line(err)
            return f"the run is not kept as it goes: {self.error}" if first else None
        self.kept_step, self.error = trainer.step_count, None
        return None

    def _check_room(self, model: Any) -> None:
        """The write fits: weights and AdamW's two moments, less the kept checkpoint it replaces."""
        if self.check_room is None:
            return
        from tui_lab.checkpoint import checkpoint_bytes

        self.check_room(checkpoint_bytes(model) * 3 - _bytes(self.folder), "keeping the run")


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def kept_note(folder: Path, name: str) -> str | None:
    """What the person is told on their next visit when `folder` (`name` as the Train form's folder takes it)
    holds a run kept as it went, else None."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or KEPT_META not in meta:
        return None
    return (f"your run from {meta[KEPT_META]} was kept at step {meta.get('step', '?')} in {name}/: type {name} in "
            "Train's folder and press o to load it, then g with 'continue live model' trains on (the next run "
            "replaces it)")
