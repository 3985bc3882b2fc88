"""One background job at a time in a thread worker, for a view or a panel: a job number, progress, done, cancel.

`JobView.start_job(work)` bumps the job number and runs `work(poster)` in a thread worker (off the event loop);
the worker reports through its `JobPoster` (`progress`, `stopped`) and its return value, an exception or
`JobCancelled` becomes one `JobDone`. Messages carry the job number, so a cancelled or replaced run's late
posts are dropped. They do not bubble: the Speed view holds the MHA/GQA/MQA panel, and a panel's messages
reaching the Speed view's handlers would read as the view's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, ProgressBar
from textual.worker import get_current_worker

from tui_lab.app.view_contract import LabView


class JobProgress(Message, bubble=False):
    """`done` of `total` (any unit), a line of text, and a partial result to draw (or None)."""

    def __init__(self, job: int, done: float, total: float, text: str = "", partial: Any = None) -> None:
        super().__init__()
        self.job, self.done, self.total, self.text, self.partial = job, done, total, text, partial


class JobDone(Message, bubble=False):
    """The job's result, or the error in one line, or `cancelled`."""

    def __init__(self, job: int, result: Any = None, error: str | None = None, cancelled: bool = False) -> None:
        super().__init__()
        self.job, self.result, self.error, self.cancelled = job, result, error, cancelled


class JobCancelled(Exception):
    """Raised by a job's work when it stopped on request: reported as cancelled, not as an error."""


class JobPoster:
    """What the worker thread holds: posts to the widget that started the job, tagged with the job's number."""

    def __init__(self, target: Widget, job: int) -> None:
        self.target, self.job = target, job
        self.worker: Any = None  # set in the worker thread
        # A worker cancelled before its thread began never runs `run` (Textual drops it): nothing would say the
        # job ended, and the view stayed "cancelling..." with Cancel lit (x pressed at once on a busy machine).
        # Whichever comes first under the lock, the thread's start or `abandon`, decides who reports the end.
        self._lock = threading.Lock()
        self._began = self._abandoned = False

    def abandon(self) -> bool:
        """The job was cancelled: True when its work never began (the caller reports it cancelled); after this
        the work does not begin."""
        with self._lock:
            self._abandoned = not self._began
            return self._abandoned

    @property
    def stopped(self) -> bool:
        """Whether Cancel was pressed (the work looks between steps)."""
        return self.worker is not None and self.worker.is_cancelled

    def progress(self, done: float, total: float, text: str = "", partial: Any = None) -> None:
        self.target.post_message(JobProgress(self.job, done, total, text, partial))

    def run(self, work: Callable[[JobPoster], Any]) -> None:
        """Worker thread: run `work` and post what came of it; an error is one line, never a crash."""
        from tui_lab.errors import one_line

        with self._lock:
            if self._abandoned:
                return
            self._began = True
        self.worker = get_current_worker()
        try:
            done = JobDone(self.job, work(self))
        except JobCancelled:
            done = JobDone(self.job, cancelled=True)
        except Exception as err:  # noqa: BLE001 - shown as one line
            done = JobDone(self.job, error=one_line(err))
        self.target.post_message(done)


class JobView(LabView):
    """A view or panel with one job at a time: `running` is the job's label (None when idle), `job` its number.
    A LabView for the Speed and Experiments views; a panel (MHA/GQA/MQA, a mechanism) keeps the hooks' defaults,
    which the App never calls on it (it asks only its seven views).

    Subclasses name their worker group, progress bar and Run/Cancel buttons, and implement `job_finished`."""

    JOB_GROUP: ClassVar[str] = "job"
    JOB_EXCLUSIVE: ClassVar[bool] = True  # a new run replaces one still running
    JOB_PROGRESS: ClassVar[str] = ""  # the ProgressBar's selector
    JOB_BUTTONS: ClassVar[dict[str, str]] = {}  # button id -> the method it calls
    # The action that cancels and its button's id: dimmed (check_action None) and disabled while nothing runs,
    # so a key that does not apply now is neither pressed in vain nor read as one that does (issue 36).
    JOB_CANCEL: ClassVar[str] = ""
    JOB_CANCEL_BUTTON: ClassVar[str] = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = 0
        self.running: Any = None
        self._poster: JobPoster | None = None  # the job's, for cancel_job

    @property
    def cancellable(self) -> bool:
        """Whether Cancel has something to stop now."""
        return bool(self.running)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.JOB_CANCEL and action == self.JOB_CANCEL:
            return True if self.cancellable else None
        return True

    def job_state_changed(self) -> None:
        """A job started or ended (or a wait for one): the cancel key and button follow."""
        if not self.is_attached:
            return
        self.refresh_bindings()
        if self.JOB_CANCEL_BUTTON:
            for button in self.query(f"#{self.JOB_CANCEL_BUTTON}").results(Button):
                # focus goes home, not to the next widget (which may be a field that then takes the keys)
                disable(button, not self.cancellable, self.home())

    def on_mount(self) -> None:
        self.job_state_changed()

    def start_job(self, work: Callable[[JobPoster], Any], total: float, label: Any = True) -> None:
        if self.running and self.JOB_EXCLUSIVE:
            # Run pressed again mid-run: say so, or the press reads as ignored (the screen looks the same).
            self.notify("started again from the beginning: the run before is cancelled", timeout=4)
        self.job += 1
        self.running = label
        self.query_one(self.JOB_PROGRESS, ProgressBar).update(total=total, progress=0)
        poster = self._poster = JobPoster(self, self.job)
        self.run_worker(lambda: poster.run(work), thread=True, group=self.JOB_GROUP, exclusive=self.JOB_EXCLUSIVE,
                        exit_on_error=False)
        self.job_state_changed()

    def cancel_job(self) -> bool:
        """Ask the running job to stop (it looks between steps); False when none runs."""
        if not self.running:
            return False
        self.workers.cancel_group(self, self.JOB_GROUP)
        # cancelled before its thread began: it never will, so the job ends here
        if self._poster is not None and self._poster.abandon():
            self.post_message(JobDone(self._poster.job, cancelled=True))
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in self.JOB_BUTTONS:
            event.stop()
            getattr(self, self.JOB_BUTTONS[event.button.id])()

    def on_job_progress(self, message: JobProgress) -> None:
        if message.job == self.job:
            self.job_progress(message)

    def job_progress(self, message: JobProgress) -> None:
        self.query_one(self.JOB_PROGRESS, ProgressBar).update(total=message.total, progress=message.done)

    def on_job_done(self, message: JobDone) -> None:
        if message.job != self.job:
            return
        label, self.running = self.running, None
        self.job_finished(message, label)
        self.job_state_changed()

    def job_finished(self, done: JobDone, label: Any) -> None:
        raise NotImplementedError


def disable(button: Button, disabled: bool, home: Widget | None) -> None:
    """Disable or enable `button`; a focused one hands the focus to `home` first."""
    if disabled and button.has_focus and home is not None:
        home.focus()
    button.disabled = disabled
