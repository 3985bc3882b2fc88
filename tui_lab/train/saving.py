"""Saving a run: a resumable checkpoint in the run's folder, written by rank 0 while the other ranks wait, and
where the disk or the folder refuses it, the run rescued to a folder of the lab's own (RunRescued names both)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tui_lab.checkpoint import SaveError
from tui_lab.paths import rescue_dir
from tui_lab.train import distributed
from tui_lab.train.events import CheckpointEvent
from tui_lab.train.state import save_trainer


def save_run(trainer, folder: str | Path | None = None) -> Path | None:
    """Write a resumable checkpoint (rank 0 only; the other ranks wait for it).

    A write the disk refuses (full, no permission) saves the run to a rescue folder instead and raises
    `RunRescued` naming both; if that fails too, `SaveError` names both reasons. Nothing is raised mid-write:
    the previous checkpoint stays whole either way."""
    folder = folder or trainer.train_config.out
    if folder is None:
        raise ValueError("out: give a checkpoint folder to save to")
    failure = None
    try:
        path = save_trainer(trainer, Path(folder)) if trainer.dist.is_main else None
    except SaveError as err:
        path, failure = None, err
    distributed.barrier(trainer.dist)
    if failure is not None:
        trainer.save_failure = failure
        _rescue(trainer, failure)
    if path is not None:
        trainer.emit(CheckpointEvent(trainer.step_count, str(path)))
    return path


def _rescue(trainer, failure: Exception) -> None:
    """Save the run where the person's own folder could not take it, and say where (RunRescued)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for place in (rescue_dir(), Path(tempfile.gettempdir()) / "tui-lab-rescued"):
        target = place / f"{Path(failure.folder).name or 'run'}-{stamp}-step{trainer.step_count}"
        try:
            saved = save_trainer(trainer, target)
        except SaveError as err:
            failure = SaveError(failure.folder, f"{failure.reason}; nor to {target}: {err.reason}",
                                failure.needed)
            continue
        trainer.emit(CheckpointEvent(trainer.step_count, str(saved)))
        raise RunRescued(failure, saved)
    raise failure


class RunRescued(SaveError):
    """The run's own folder refused the checkpoint; the run was saved to `rescued` instead (one line, both named)."""

    def __init__(self, failure: SaveError, rescued: Path) -> None:
        ValueError.__init__(self, f"{failure}; the run was saved to {rescued} instead (move it where there is room, "
                                  f"or go on with tui-lab train --resume {rescued})")
        self.folder, self.reason, self.needed, self.rescued = failure.folder, failure.reason, failure.needed, rescued
