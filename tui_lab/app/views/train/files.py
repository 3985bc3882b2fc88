"""The Train view's files: save and load checkpoints, export the loss history, and quitting mid-run.

Every save and load answers with a notification: where it wrote, what it loaded, or the one-line reason
it could not. Checkpoints go to the folder in the form, which starts as `runs/run-N` (N the run number,
relative to the folder the app was started in) until the person types another; CSV exports go to
`tui_lab.paths.exports_dir()`. Saving runs in a thread worker: torch.save of a 124M model takes seconds.

`~` is expanded and every message names the folder really written. Saving over a folder that holds a
checkpoint this app did not write asks first (its weights, optimizer and training state would go; anything else
in the folder stays, as with every save: `tui_lab.checkpoint_files`). A folder holding files but no checkpoint
is refused in one line. A failed
save (disk full, permission, quota) is one line; the live model stays, and another folder can be tried. In a
served session (`tui_lab.served`) the folder is a name inside the session's own folder, within its quota.

`TrainFiles` is a plain object the view owns: the view's keys call its actions; it reads the run from the
view's `RunState`, the folder from the form, and acts through `host` (the view, as a Textual widget: its
workers, notifications and screens); its savers post `CheckpointSaved` to the host, which hands it back
(`saved`). What it has to say goes through `say`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.widget import Widget

from tui_lab.app.modals.confirm import Confirm
from tui_lab.app.modals.quit import CANCEL, SAVE, QuitWhileTraining
from tui_lab.app.views.train.form import TrainForm
from tui_lab.app.views.train.state import RunState
from tui_lab.run_lock import run_lock
from tui_lab.served import ServedPolicy, exports_folder, page_path

RUNS_DIR = "runs"  # the default checkpoint folder's parent, as `tui-lab train --out runs/NAME` suggests


def default_folder(run: int) -> str:
    return f"{RUNS_DIR}/run-{run}"


class CheckpointSaved(Message):
    def __init__(self, path: str, error: str | None, then_quit: bool) -> None:
        super().__init__()
        self.path, self.error, self.then_quit = path, error, then_quit


Say = Callable[..., None]  # (text, style="") -> None: the line under the Train view's numbers


class TrainFiles:
    """The Train view's saving and loading. `host`: the widget whose workers save and which receives
    `CheckpointSaved` (its handler calls `saved`); `state`: the run, read only; `say`: the status line."""

    def __init__(self, host: Widget, state: RunState, say: Say) -> None:
        self.host, self.state, self.say = host, state, say
        self.last_export: Path | None = None  # the last CSV written
        self._auto_folder: str | None = None  # the folder the form shows by default, until the person edits it
        self._after_end: str | None = None  # "quit" or "save-quit": what the end of the run should do
        self._written: set[Path] = set()  # the folders this app saved to: saving there again needs no question
        self._saving_generation: int | None = None  # the live model's, when the save in flight is of its weights

    @property
    def app(self) -> Any:
        return self.host.app

    @property
    def form(self) -> TrainForm:
        return self.host.query_one(TrainForm)

    # -- the folder --------------------------------------------------------------------------------
    def suggest_folder(self, run: int) -> None:
        """Show `runs/run-N` in the form, unless the person typed a folder of their own."""
        form = self.form
        if not form.folder or form.folder == self._auto_folder:
            self._auto_folder = default_folder(run)
            form.set_folder(self._auto_folder)

    def _folder(self) -> str:
        session = self.state.session
        number = session.run if session else len(self.state.store.runs) + 1
        return self.form.folder or default_folder(number)

    def _target(self) -> Path:
        """The folder the form names, as it will really be written: `~` expanded, absolute; served, a name inside
        the session's own folder (anything else is one ValueError line)."""
        return target_folder(self._folder())

    # -- saving --------------------------------------------------------------------------------------
    def save(self) -> None:
        from tui_lab.checkpoint_files import is_checkpoint, save_target

        target = self._target()
        try:
            save_target(target)  # a folder the save would refuse (it holds files of yours): said now, nothing written
        except ValueError as err:
            self.saved(CheckpointSaved(str(target), _one_line(err), then_quit=False))
            return
        self._something_to_save()  # said before asking to replace a folder, not raised from the question's answer
        if is_checkpoint(target) and target not in self._written:
            self.app.push_screen(ReplaceCheckpoint(_replace_text(target)),
                                 lambda yes: self._save_to(str(target)) if yes else None)
            return
        self._save_to(str(target))

    def _run_to_save(self) -> bool:
        """The save writes the run's checkpoint (its process holds it), not the live model."""
        session = self.state.session
        return session is not None and session.ready and \
            (session.active or self.app.live.model is session.model or session.crashed)

    def _something_to_save(self) -> None:
        live = self.app.live
        if not self._run_to_save() and (live.model is None or live.tokenizer is None):
            raise ValueError("nothing to save: a random preset has no tokenizer; train it first (g)")

    def _save_to(self, folder: str) -> None:
        session, live = self.state.session, self.app.live
        # The live model's generation when these are its weights as they stay (not a run still moving them):
        # Apply then knows they are on disk (LiveModel.kept_in).
        self._saving_generation = live.generation if live.model is not None and not self.state.training and \
            (session is None or live.model is session.model or not session.ready) else None
        if self._run_to_save():
            self.host.notify(f"saving run #{session.run} to {_shown(folder)}...", title="save")
            self.host.run_worker(lambda: self._save_run(session, folder), thread=True, group="save",
                            exit_on_error=False)
            return
        self._something_to_save()
        self.host.notify(f"saving the live model to {_shown(folder)}...", title="save")
        self.host.run_worker(lambda: self._save_live(live.model, live.tokenizer, live.origin, folder), thread=True,
                        group="save", exit_on_error=False)

    def _save_run(self, session: Any, folder: str, then_quit: bool = False) -> None:
        try:
            _check_quota(session.model or self.app.live.model, resumable=True)
            with run_lock(folder, "checkpoint folder"):  # a `train --resume` writing it: refused, naming it
                path = session.save(folder)  # by the trainer process, between two steps
            self.host.post_message(CheckpointSaved(str(path), None, then_quit))
        except Exception as err:  # noqa: BLE001 - shown as one line
            self.host.post_message(CheckpointSaved(folder, _one_line(err), then_quit))

    def _save_live(self, model: Any, tokenizer: Any, origin: str, folder: str) -> None:
        from tui_lab.checkpoint import save_checkpoint

        try:
            _check_quota(model, resumable=False)
            with run_lock(folder, "checkpoint folder"):
                path = save_checkpoint(folder, model, tokenizer, meta={"origin": origin})
            self.host.post_message(CheckpointSaved(str(path), None, False))
        except Exception as err:  # noqa: BLE001 - shown as one line
            self.host.post_message(CheckpointSaved(folder, _one_line(err), False))

    def saved(self, message: CheckpointSaved) -> None:
        """What a saver posted (on the UI thread): say where it wrote, or why not."""
        if message.error:
            error = f"{message.error}; the model is still here: type another folder and save again (w)"
            self.host.notify(f"{_shown(message.path)}: {error}", title="not saved", severity="error", timeout=10)
            self.say(f"not saved: {error}", "bold red")
        else:
            self._written.add(Path(message.path))
            if self._saving_generation is not None:
                self.app.live.mark_saved(message.path, self._saving_generation)
            self.host.notify(f"checkpoint written to {_shown(message.path)}", title="saved")
            self.say(f"saved to {_shown(message.path)} (o loads it back)", "bold green")
        if message.then_quit:
            self.app.exit()

    # -- loading -------------------------------------------------------------------------------------
    def load(self) -> None:
        if self.state.training:
            raise ValueError("stop the run (x) before loading a checkpoint")
        folder = self._target()
        if not folder.is_dir():
            raise ValueError(f"checkpoint folder ({folder}) is not a folder: save one first (w)")
        self.host.notify(f"loading the checkpoint in {folder}...", title="load")
        self.app.live.start_load_checkpoint(self.app, str(folder))  # the app says what it loaded (or why not)

    # -- CSV -----------------------------------------------------------------------------------------
    def export_csv(self) -> None:
        runs = self.state.store
        if not runs.runs:
            raise ValueError("no runs to export yet: train first (g)")
        path = exports_folder() / f"loss-history-{time.strftime('%Y%m%d-%H%M%S')}.csv"
        self.last_export = runs.export_csv(path)
        self.host.notify(f"loss history of {len(runs.runs)} run(s) written to {path}", title="CSV export")

    # -- quitting while a run goes -------------------------------------------------------------------
    def confirm_quit(self) -> bool:
        """Called by the app's quit: True when a modal took over (training is running)."""
        if not self.state.training:
            return False
        step = self.state.stats.get("step", 0)
        self.app.push_screen(QuitWhileTraining(f"run #{self.state.session.run}, step {step}", _shown(self._folder())),
                             self._quit_choice)
        return True

    def _quit_choice(self, choice: str | None) -> None:
        if choice in (None, CANCEL):
            return
        if not self.state.training:  # the run ended while the modal was open: nothing left to stop
            self._end_then(choice)
            return
        self._after_end = "save-quit" if choice == SAVE else "quit"
        self.say("stopping to save, then quitting..." if choice == SAVE else "stopping, then quitting...", "bold")
        self.state.session.stop()

    def _end_then(self, choice: str) -> None:
        session = self.state.session
        if choice == SAVE and session is not None and session.ready:
            folder = str(self._target())
            self.host.run_worker(lambda: self._save_run(session, folder, then_quit=True), thread=True, group="save",
                            exit_on_error=False)
        else:
            self.app.exit()

    def after_run(self) -> None:
        """Called when the run ended: finish a quit that was waiting for it."""
        after, self._after_end = self._after_end, None
        if after == "save-quit":
            self._end_then(SAVE)
        elif after == "quit":
            self.app.exit()


class ReplaceCheckpoint(Confirm):
    YES = "Replace it (y)"
    IDS = ("replace-text", "replace-yes", "replace-cancel")


def target_folder(text: str) -> Path:
    """A folder as typed, as it will really be written (see `TrainFiles._target`)."""
    return page_path(text, "folder")


def _replace_text(folder: Path) -> str:
    import json

    try:
        state = json.loads((folder / "train_state.json").read_text())
        what = f"a resumable run at step {state.get('step', '?')} (its optimizer and training state go too)"
    except (OSError, ValueError):
        what = "a checkpoint"
    return f"{folder} holds {what}, not saved by this session. Replace it?"


def _check_quota(model: Any, resumable: bool) -> None:
    """A served session's folder stays within its quota (weights, and AdamW's two moments for a resumable run)."""
    policy = ServedPolicy.from_env()
    if policy is None or model is None:
        return
    from tui_lab.checkpoint import checkpoint_bytes

    policy.check_quota(checkpoint_bytes(model) * (3 if resumable else 1))


def _shown(folder: str | Path) -> str:
    """A folder as the person can find it: absolute, so a relative default says where it really is."""
    return str(Path(folder).expanduser().resolve())


def _one_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
