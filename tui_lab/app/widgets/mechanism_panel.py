"""What the mechanism panels share (the logit lens, head effects, patching): a background job on a private
copy of the live model (`tui_lab.mechanism.readouts`), a progress bar, Cancel, one summary line and a grid.

The job's work gets `step(done, total)`: it posts progress and raises `JobCancelled` once Cancel was pressed,
so the core's loops stop between passes. A panel hides itself until a key shows it; Escape hides it again.
A run asked for before the live model arrived waits for it and runs when it comes (`live_model`,
`live_model_changed`), the same in every panel: the app opens while the model builds, and a person's first keys
often come before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, ProgressBar, Static

from tui_lab.app.background_job import JobCancelled, JobDone, JobPoster, JobView
from tui_lab.app.widgets.heatmap import QUIET_KEYS, Heatmap


def stepper(poster: JobPoster, text: str) -> Callable[[int, int], None]:
    """The core's `on_step`: progress for the bar, and a stop between passes once Cancel was pressed."""
    def step(done: int, total: int) -> None:
        poster.progress(done, total, text)
        if poster.stopped:
            raise JobCancelled

    return step


class PanelMap(Heatmap):
    """A panel's grid: Escape hands the keys back to the view (the grid's arrows are the cursor); # and z are
    on the view's hint line, so at 80 columns the footer keeps the view's keys and q quit."""

    BINDINGS = [Binding("escape", "leave", "back", show=False), *QUIET_KEYS]

    def action_leave(self) -> None:
        panel = next((a for a in self.ancestors if isinstance(a, MechanismPanel)), None)
        if panel is not None:
            panel.hide()


class MechanismPanel(JobView):
    """Subclasses set the ids (`PREFIX`), compose their inputs in `compose_inputs`, start work in `run` and draw
    the result in `draw`. The panel's own `#<prefix>-summary` line says what runs, what came out, or why not."""

    PREFIX = "mech"
    BINDINGS = [Binding("r", "run_job", "run", show=False), Binding("x", "cancel_job", "cancel", show=False)]
    DEFAULT_CSS = """
    MechanismPanel { height: 1fr; display: none; }
    MechanismPanel.-shown { display: block; }
    MechanismPanel .mech-row { height: 1; }
    MechanismPanel .mech-name { padding: 0 1; color: $text-muted; }
    MechanismPanel .mech-row Input { width: 1fr; }
    MechanismPanel .mech-row Button { margin-left: 1; width: auto; min-width: 8; }
    MechanismPanel ProgressBar { height: 1; }
    MechanismPanel ProgressBar Bar { width: 1fr; }
    MechanismPanel .mech-summary { height: auto; max-height: 2; }
    MechanismPanel .mech-cell { height: auto; max-height: 3; color: $text; }
    MechanismPanel PanelMap { height: 1fr; min-height: 5; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        p = self.PREFIX
        self.JOB_GROUP, self.JOB_PROGRESS = f"{p}-job", f"#{p}-progress"
        self.JOB_BUTTONS = {f"{p}-run": "run", f"{p}-cancel": "cancel"}
        self.JOB_CANCEL, self.JOB_CANCEL_BUTTON = "cancel_job", f"{p}-cancel"  # x and Cancel x: while one runs
        self.result: Any = None
        self._waiting = False

    @property
    def waiting(self) -> bool:
        """A run was asked for before the live model arrived: it runs when the model does (x cancels it)."""
        return self._waiting

    @waiting.setter
    def waiting(self, value: bool) -> None:
        self._waiting = value
        self.job_state_changed()

    @property
    def cancellable(self) -> bool:
        return bool(self.running) or self._waiting

    def compose(self) -> ComposeResult:
        yield from self.compose_inputs()
        yield ProgressBar(total=1, id=f"{self.PREFIX}-progress", show_eta=False)
        yield Static("", id=f"{self.PREFIX}-summary", classes="mech-summary")
        yield PanelMap(id=f"{self.PREFIX}-map")
        yield Static("", id=f"{self.PREFIX}-cell", classes="mech-cell")

    def compose_inputs(self) -> ComposeResult:
        with Horizontal(classes="mech-row"):
            yield Button("Run r", id=f"{self.PREFIX}-run", variant="primary", compact=True)
            yield Button("Cancel x", id=f"{self.PREFIX}-cancel", variant="error", compact=True)

    def job_home(self) -> PanelMap:
        return self.grid

    @property
    def grid(self) -> PanelMap:
        return self.query_one(f"#{self.PREFIX}-map", PanelMap)

    def show(self) -> None:
        """Shown, its grid focused: r, x, the arrows and Escape act at once (a hidden widget had the focus)."""
        self.add_class("-shown")
        if not any(isinstance(w, Input) and w.has_focus for w in self.query(Input)):
            self.grid.focus()

    def action_run_job(self) -> None:
        self.run()

    def action_cancel_job(self) -> None:
        self.cancel()

    def hide(self) -> None:
        self.put_away()
        self.post_message(self.Hidden())

    def put_away(self) -> None:
        """Hidden with no word to the view (another panel takes its room): its job and its wait end."""
        self.waiting = False
        self.cancel_job()
        self.remove_class("-shown")

    class Hidden(Message):
        """The panel went away: the view gives its own widgets the room back."""

    def start(self, work: Callable[[Callable[[int, int], None]], Any], total: int, text: str) -> None:
        """Run `work(step)` in the background; the summary says `text` meanwhile."""
        self.result = None
        self.say(text)
        self.start_job(lambda poster: work(stepper(poster, text)), total=total, label=text)

    def run(self) -> None:
        raise NotImplementedError

    def live_model(self) -> Any | None:
        """The live model for `run`; None, with the panel saying it waits, when the model has not arrived yet."""
        live = self.app.live
        self.waiting = not live.ready
        if self.waiting:
            self.say(f"waiting for the live model ({live.status}): runs when it arrives · x cancels")
            return None
        return live.model

    def live_model_changed(self) -> None:
        """The view's hook when a live model arrives: a run that waited for it starts now."""
        if self.waiting and self.has_class("-shown") and self.app.live.ready:
            self.run()

    def cancel(self) -> None:
        if self.waiting:
            self.waiting = False
            self.say("cancelled: nothing measured (press r to run again)")
        elif self.cancel_job():
            self.say("cancelling...")

    def job_finished(self, done: JobDone, label: Any) -> None:
        if done.cancelled:
            self.say("cancelled: nothing measured (press r to run again)")
        elif done.error:
            self.say(f"[red]not run:[/red] {done.error}")
        else:
            self.result = done.result
            self.draw(done.result)
            self.grid.focus()  # the arrows walk the new grid at once
            self.describe(*self.grid.cursor)

    def draw(self, result: Any) -> None:
        raise NotImplementedError

    def describe(self, row: int, col: int) -> None:
        """What the cell under the cursor holds, in the panel's cell line (subclasses say it)."""

    def say(self, text: str) -> None:
        self.query_one(f"#{self.PREFIX}-summary", Static).update(text)

    def cell(self, text: str) -> None:
        self.query_one(f"#{self.PREFIX}-cell", Static).update(text)
