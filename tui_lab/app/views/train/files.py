"""The Train view's files: save and load checkpoints, export the loss history, and quitting mid-run.

Every save and load answers with a notification: where it wrote, what it loaded, or the one-line reason
it could not. Checkpoints go to the folder in the form, which starts as `runs/run-N` (N the run number,
relative to the folder the app was started in) until the person types another; CSV exports go to
`tui_lab.paths.exports_dir()`. Saving runs in a thread worker: torch.save of a 124M model takes seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.message import Message

from tui_lab.app.guard import guarded
from tui_lab.app.modals.quit import CANCEL, SAVE, QuitWhileTraining
from tui_lab.app.views.train.form import TrainForm

RUNS_DIR = "runs"  # the default checkpoint folder's parent, as `tui-lab train --out runs/NAME` suggests


def default_folder(run: int) -> str:
    return f"{RUNS_DIR}/run-{run}"


class CheckpointSaved(Message):
    def __init__(self, path: str, error: str | None, then_quit: bool) -> None:
        super().__init__()
        self.path, self.error, self.then_quit = path, error, then_quit


class TrainFiles:
    """Mixin of TrainView (which provides `session`, `store`, `stats`, `training`, `_say`)."""

    _auto_folder: str | None = None  # the folder the form shows by default, until the person edits it
    _after_end: str | None = None  # "quit" or "save-quit": what the end of the run should do
    last_export: Path | None = None

    # -- the folder --------------------------------------------------------------------------------
    def _suggest_folder(self, run: int) -> None:
        """Show `runs/run-N` in the form, unless the person typed a folder of their own."""
        form = self.query_one(TrainForm)
        if not form.folder or form.folder == self._auto_folder:
            self._auto_folder = default_folder(run)
            form.set_folder(self._auto_folder)

    def _folder(self) -> str:
        number = self.session.run if self.session else len(self.store.runs) + 1
        return self.query_one(TrainForm).folder or default_folder(number)

    # -- saving --------------------------------------------------------------------------------------
    @guarded
    def action_save(self) -> None:
        folder, session = self._folder(), self.session
        if session is not None and session.ready and \
                (session.active or self.app.live.model is session.model or session.crashed):
            self.notify(f"saving run #{session.run} to {_shown(folder)}...", title="save")
            self.run_worker(lambda: self._save_run(session, folder), thread=True, group="save",
                            exit_on_error=False)
            return
        live = self.app.live
        if live.model is None or live.tokenizer is None:
            raise ValueError("nothing to save: a random preset has no tokenizer; train it first (g)")
        self.notify(f"saving the live model to {_shown(folder)}...", title="save")
        self.run_worker(lambda: self._save_live(live.model, live.tokenizer, live.origin, folder), thread=True,
                        group="save", exit_on_error=False)

    def _save_run(self, session: Any, folder: str, then_quit: bool = False) -> None:
        try:
            path = session.save(folder)  # by the trainer process, between two steps
            self.post_message(CheckpointSaved(str(path), None, then_quit))
        except Exception as err:  # noqa: BLE001 - shown as one line
            self.post_message(CheckpointSaved(folder, _one_line(err), then_quit))

    def _save_live(self, model: Any, tokenizer: Any, origin: str, folder: str) -> None:
        from tui_lab.checkpoint import save_checkpoint

        try:
            path = save_checkpoint(folder, model, tokenizer, meta={"origin": origin})
            self.post_message(CheckpointSaved(str(path), None, False))
        except Exception as err:  # noqa: BLE001 - shown as one line
            self.post_message(CheckpointSaved(folder, _one_line(err), False))

    def on_checkpoint_saved(self, message: CheckpointSaved) -> None:
        if message.error:
            self.notify(f"{_shown(message.path)}: {message.error}", title="not saved", severity="error", timeout=10)
            self._say(f"not saved: {message.error}", "bold red")
        else:
            self.notify(f"checkpoint written to {_shown(message.path)}", title="saved")
            self._say(f"saved to {_shown(message.path)} (o loads it back)", "bold green")
        if message.then_quit:
            self.app.exit()

    # -- loading -------------------------------------------------------------------------------------
    @guarded
    def action_load(self) -> None:
        if self.training:
            raise ValueError("stop the run (x) before loading a checkpoint")
        folder = self._folder()
        if not Path(folder).is_dir():
            raise ValueError(f"checkpoint folder ({_shown(folder)}) is not a folder: save one first (w)")
        self.notify(f"loading the checkpoint in {_shown(folder)}...", title="load")
        self.app.live.start_load_checkpoint(self.app, _shown(folder))  # the app says what it loaded (or why not)

    # -- CSV -----------------------------------------------------------------------------------------
    @guarded
    def action_export_csv(self) -> None:
        from tui_lab.paths import exports_dir

        if not self.store.runs:
            raise ValueError("no runs to export yet: train first (g)")
        path = exports_dir() / f"loss-history-{time.strftime('%Y%m%d-%H%M%S')}.csv"
        self.last_export = self.store.export_csv(path)
        self.notify(f"loss history of {len(self.store.runs)} run(s) written to {path}", title="CSV export")

    # -- quitting while a run goes -------------------------------------------------------------------
    def confirm_quit(self) -> bool:
        """Called by the app's quit: True when a modal took over (training is running)."""
        if not self.training:
            return False
        step = self.stats.get("step", 0)
        self.app.push_screen(QuitWhileTraining(f"run #{self.session.run}, step {step}", _shown(self._folder())),
                             self._quit_choice)
        return True

    def _quit_choice(self, choice: str | None) -> None:
        if choice in (None, CANCEL):
            return
        if not self.training:  # the run ended while the modal was open: nothing left to stop
            self._end_then(choice)
            return
        self._after_end = "save-quit" if choice == SAVE else "quit"
        self._say("stopping to save, then quitting..." if choice == SAVE else "stopping, then quitting...", "bold")
        self.session.stop()

    def _end_then(self, choice: str) -> None:
        session = self.session
        if choice == SAVE and session is not None and session.ready:
            folder = self._folder()
            self.run_worker(lambda: self._save_run(session, folder, then_quit=True), thread=True, group="save",
                            exit_on_error=False)
        else:
            self.app.exit()

    def _after_run(self) -> None:
        """Called when the run ended: finish a quit that was waiting for it."""
        after, self._after_end = self._after_end, None
        if after == "save-quit":
            self._end_then(SAVE)
        elif after == "quit":
            self.app.exit()


def _shown(folder: str | Path) -> str:
    """A folder as the person can find it: absolute, so a relative default says where it really is."""
    return str(Path(folder).expanduser().resolve())


def _one_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
