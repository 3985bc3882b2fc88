"""What the mechanism panels share (the logit lens, head effects, patching): a background job on a private
copy of the live model (`tui_lab.mechanism.readouts`), a progress bar, Cancel, one summary line and a grid.

The job's work gets `step(done, total)`: it posts progress and raises `JobCancelled` once Cancel was pressed,
so the core's loops stop between passes. A panel hides itself until a key shows it; Escape hides it again.
A run asked for before the live model arrived waits for it and runs when it comes (`live_model`,
`live_model_changed`), the same in every panel: the app opens while the model builds, and a person's first keys
often come before it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, ProgressBar, Static

from tui_lab.app.background_job import JobCancelled, JobDone, JobPoster, JobProgress, JobView
from tui_lab.app.widgets.drawn_inputs import Answer, DrawnInputs, refuse
from tui_lab.app.widgets.heatmap import QuietHeatmap


class Stepper:
    """The core's `on_step(done, total)`: progress for the bar, the summary's count and time left, and a stop
    between passes once Cancel was pressed. `stage` names a step before the passes (a translation, the model's
    copy, the clean pass), while the bar pulses: an ablation of transformer-2017-base sat at 0% with no word for
    its first 15 s.

    The time left is the passes' own rate since the first count the core reported (head_ablation reports 0
    before its first pass), times the passes left."""

    def __init__(self, poster: JobPoster, text: str) -> None:
        self.poster, self.text = poster, text
        self.first: tuple[float, int] | None = None  # (clock, done) at the first count

    def stage(self, what: str) -> None:
        self.poster.progress(0, 0, f"{self.text} {what} · x cancels")
        self._stop()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = (now, done)
        start, done0 = self.first
        left = f" · about {fmt_left((now - start) / (done - done0) * (total - done))} left" if done > done0 else ""
        self.poster.progress(done, total, f"{self.text} {done}/{total}{left} · x cancels")
        self._stop()

    def _stop(self) -> None:
        if self.poster.stopped:
            raise JobCancelled


def stepper(poster: JobPoster, text: str) -> Stepper:
    return Stepper(poster, text)


def fmt_left(seconds: float) -> str:
    """'4 s', '1 min 05 s': a time left, to the second."""
    whole = max(0, round(seconds))
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


class PanelMap(QuietHeatmap):
    """A panel's grid: Escape hands the keys back to the view (the grid's arrows are the cursor); # and z are
    on the view's hint line, so at 80 columns the footer keeps the view's keys and q quit."""

    BINDINGS = [Binding("escape", "leave", "back", show=False)]

    def action_leave(self) -> None:
        panel = next((a for a in self.ancestors if isinstance(a, MechanismPanel)), None)
        if panel is not None:
            panel.hide()


class MechanismPanel(JobView):
    """Subclasses set the ids (`PREFIX`), compose their inputs in `compose_inputs`, start work in `run` and draw
    the result in `draw`. The panel's own `#<prefix>-summary` line says what runs, what came out, or why not.
    `SAME` is what a press on the inputs whose result is drawn says (`answered`), in one line at 80 columns: what
    the panel reads, and the key that runs it on new inputs."""

    PREFIX = "mech"
    SAME = "{key}: the result shown is for these inputs already; change them, then {key}"
    # a run on new inputs (a new live model, say the same checkpoint loaded again) that drew what was drawn
    AGAIN = "ran again: the same result as before (the live model gives the same numbers)"
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
        self.drawn = DrawnInputs()  # `inputs_key()` of the run under way and of the result drawn
        self._summary = ""  # the summary line as said last
        self._before: tuple = ()  # the grid and summary a run started over: a result that redraws them says so
        self.answer = Answer(self, self.say, lambda: self._summary)

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
        """r. On the inputs whose result is drawn it says so at once: a second run drew the same grid and the
        screen did not change, a press named on screen that did nothing (issue 36's crawler, Generate `5 l r`)."""
        if not self.answered("r"):
            self.run()

    def answered(self, key: str) -> bool:
        """True when a run now would draw the result drawn already (the same `inputs_key()`): the panel shows
        it and says so in its summary line, `key` (the key pressed) named; or would start again the run under
        way on them (a notification says so: its progress has the line). False: the caller runs."""
        inputs = self.inputs_key()
        if self.running and inputs is not None and inputs == self.drawn.asked:  # its progress has the line
            self.show()
            self.notify(f"{key}: already running on these inputs · x cancels", title="running", timeout=4)
            return True
        if self.running or self.result is None or not self.drawn.same(inputs):
            return False
        self.show()
        self.answer(self.same_inputs(key))
        return True

    def same_inputs(self, key: str) -> str:
        return self.SAME.format(key=key)

    def inputs_key(self) -> Any:
        """What a run reads (the live model's generation, the text): a press of r on the inputs whose result is
        drawn is answered, not run again. None (the default): every press runs."""
        return None

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

    def start(self, work: Callable[[Stepper], Any], total: int, text: str) -> None:
        """Run `work(step)` in the background; the summary says `text` meanwhile, then the passes done and the
        time left. The bar pulses until the first count (the work before the passes has none)."""
        self.result = None
        self._before = self.drawn_now()
        self.drawn.ask(self.inputs_key())
        self.say(f"{text} · x cancels")
        self.start_job(lambda poster: work(stepper(poster, text)), total=total, label=text)
        self.query_one(self.JOB_PROGRESS, ProgressBar).update(total=None)

    def job_progress(self, message: JobProgress) -> None:
        """A count moves the bar (a stage, total 0, keeps it pulsing); its text goes in the summary."""
        if message.total > 0:
            self.query_one(self.JOB_PROGRESS, ProgressBar).update(total=message.total, progress=message.done)
        if message.text:
            self.say(message.text)

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
            self.keep(done.result)
            self.draw(done.result)
            self.grid.focus()  # the arrows walk the new grid at once
            self.describe(*self.grid.cursor)
            self.tell_if_unchanged()

    def drawn_now(self) -> tuple:
        """What a run draws (a panel with another kind of grid says its own), to tell one that drew the same."""
        grid = self.grid
        return grid.values, grid.row_labels, grid.col_labels, self.summary

    @property
    def summary(self) -> str:
        """The summary line as said last."""
        return self._summary

    def tell_if_unchanged(self) -> None:
        """A finished run that drew what was drawn says so: its flash of progress came and went between frames."""
        if self.drawn_now() == self._before:
            self.answer(self.AGAIN, self._summary)

    def keep(self, result: Any) -> None:
        """The run's result, to be drawn: r on the same inputs now says so."""
        self.result = result
        self.drawn.drawn()

    def draw(self, result: Any) -> None:
        raise NotImplementedError

    def describe(self, row: int, col: int) -> None:
        """What the cell under the cursor holds, in the panel's cell line (subclasses say it)."""

    def refuse(self, text: str) -> None:
        """A run refused, said in the summary line. Said again while the line says it, it notifies too: a second
        press shows something (r on a refused pair changed nothing on screen: the crawler's long tier)."""
        refuse(self, self.say, self._summary, text, "not run")

    def say(self, text: str) -> None:
        self._summary = text
        self.query_one(f"#{self.PREFIX}-summary", Static).update(text)

    def cell(self, text: str) -> None:
        self.query_one(f"#{self.PREFIX}-cell", Static).update(text)
