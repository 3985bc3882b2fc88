"""The Attention view's captures as a person asks for them: r (the Run button, Enter in a field) and what the view
starts itself (a new live model, the Tour's g). Each capture runs in a thread worker (`jobs`); its grids come back
as a `capture.Captured` message, which the view draws.

r on the text whose grids are on screen answers instead of capturing the same grids again, and r whose capture
left the view showing what it showed says why (the text does not change that grid, or the pane in the grid's
place): a press named on screen that changed nothing (issue 36's crawler). What the view shows is read from the
screen (`shown_text`) as well as from the grid: a pane in the grid's place (inside one head on the mean of heads)
shows none of the grid a new text changed.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from tui_lab.app.views.attention import capture as work
from tui_lab.app.views.attention import jobs
from tui_lab.app.widgets.drawn_inputs import Answer, DrawnInputs, shown_text
from tui_lab.errors import one_line

SAME_TEXT = "r: the grids shown are this text's already; edit the text, then r"
# r on new text over a grid the text does not change (a positions table, a mask of as many tokens)
TEXT_FREE = "r: captured the new text; this grid does not use it (k: its attention grids)"
# r on new text with a pane in the grid's place that the text does not change (inside one head, mean of heads).
# Each answer fits the info line's 76 columns at 80: PANE_SAME on two rows was read cut after "with" (the long
# tier's HF 80x24 walk at e1bf919: the row shown before the line's new height).
PANE_SAME = "r: captured the new text; the pane over the grid does not change with it"


class RunHost(Protocol):
    """What the captures ask of the view that holds them (the Attention view)."""

    app: Any
    workers: Any
    cap: Any
    panes: Any

    @property
    def inputs(self) -> Any: ...
    def say(self, text: str) -> None: ...
    def refuse(self, text: str) -> None: ...
    def info_text(self) -> str: ...
    def steady_rows(self) -> tuple: ...
    def grid_shown(self) -> tuple: ...
    def post_message(self, message: Any) -> bool: ...
    def call_after_refresh(self, callback: Any, *args: Any) -> bool: ...
    def run_worker(self, work: Any, **kwargs: Any) -> Any: ...
    def set_timer(self, delay: float, callback: Any) -> Any: ...
    def notify(self, message: str, *, title: str = "", timeout: float | None = None) -> None: ...


class Arrival(NamedTuple):
    """What a capture's grids replace: whether they are the same text's, and the grid drawn."""

    same_text: bool
    shown: tuple


class CaptureRuns:
    """The captures of one Attention view: `run` is r, `start` any capture; `arriving` and `arrived` bracket the
    view's drawing of a capture's grids."""

    def __init__(self, view: RunHost) -> None:
        self.view = view
        self.generation = -1  # the live model's generation the grids on screen were captured from
        self.asked_by_run = False  # the capture under way was r's (a capture nobody can tell from the last says so)
        self.line_at_press = ""  # the info line when r started its capture (`Answer`'s pressed_on)
        self.screen_at_press: list[str] = []  # what the view showed then, its fields and info line aside
        self.drawn = DrawnInputs()  # `inputs_now()` of the capture under way and of the grids on screen (r)
        self.answer = Answer(view, view.say, view.info_text)

    def inputs_now(self) -> tuple:
        """What a capture reads: the live model's generation and the inputs as typed."""
        return self.view.app.live.generation, *self.view.inputs.key()

    def busy(self) -> bool:
        return any(w.group == "attention" and not w.is_finished for w in self.view.workers)

    def run(self) -> None:
        """r: on the text whose grids are on screen it says so at once (it captured the same grids again and said
        nothing)."""
        if self.view.app.live.ready and self.drawn.same(self.inputs_now()) and not self.busy():
            self.answer(SAME_TEXT)
        else:
            self.line_at_press = self.view.info_text()
            self.screen_at_press = shown_text(self.view, self.view.steady_rows())
            self.start()
            self.asked_by_run = True

    def start(self) -> None:
        view, live = self.view, self.view.app.live
        if not live.ready:
            view.refuse(f"the live model is not ready yet ({live.status})")
            return
        try:
            job, doing = jobs.capture_job(live, view.inputs, view.post_message)
        except ValueError as err:  # an empty sentence: said where the grid's keys are named, and it stays there
            view.refuse(one_line(err))
            return
        self.drawn.ask(self.inputs_now())
        view.say(doing)
        view.run_worker(job, thread=True, exclusive=True, group="attention", exit_on_error=False)

    def arriving(self, message: work.Captured) -> Arrival:
        """A capture's grids are about to replace the view's capture and the grid drawn."""
        cap = self.view.cap
        # r's capture of the grids already drawn (its record of them lost on some path): the same screen, unsaid
        same_text = (self.generation, cap.src, cap.tgt) == (message.generation, message.src, message.tgt)
        self.generation = message.generation
        if self.drawn.asked is not None and self.drawn.asked[0] == message.generation:
            self.drawn.drawn()  # r on these inputs now says so
        else:
            self.drawn.forget()
        return Arrival(same_text, self.view.grid_shown())

    def arrived(self, arrival: Arrival) -> None:
        """The grids are drawn: r whose capture left the view as it was says why, once the screen shows them."""
        if self.asked_by_run:
            self.view.call_after_refresh(self._answer_unchanged, arrival)
        self.asked_by_run = False

    def _answer_unchanged(self, arrival: Arrival) -> None:
        """Said when the grid drawn is the one replaced, or when the view reads as it did (a pane in the grid's
        place): its rows with text, the fields and the info line aside (the info line's height moves the rest)."""
        now = shown_text(self.view, self.view.steady_rows())
        if arrival.shown != self.view.grid_shown() and _with_text(now) != _with_text(self.screen_at_press):
            return
        covered = self.view.panes.in_place() is not None
        self.answer(SAME_TEXT if arrival.same_text else PANE_SAME if covered else TEXT_FREE, self.line_at_press)

    def failed(self) -> None:
        self.drawn.forget()  # r tries again


def _with_text(rows: list[str]) -> list[str]:
    return [row.rstrip() for row in rows if any(c.isalnum() for c in row)]
