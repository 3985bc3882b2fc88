"""A run asked for on the inputs whose result is on screen is answered, not run again: it drew the same numbers
and the screen did not change, a press named on the screen that did nothing (issue 36's crawler). One piece for
the Attention view's capture (r) and the mechanism panels (r, and the Attention view's a, d and j).

`DrawnInputs` remembers the inputs a run read (`ask`, as it starts) and makes them the result's on screen once it
is drawn (`drawn`); `same(key)` then tells a press on those inputs. `Answer` says so: a line in
the place of the status line, which comes back after a while. `refuse` says why a press does not apply, a line
that stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from rich.text import Text

from tui_lab.app.textual_private import screen_strips

SAY_S = 4.0  # how long the answer stays before the line it replaced comes back
# A press this soon after the line came back may have come before the screen showed it back: the answer said again
# then looks like nothing happened (the long tier's English 100x30 walk at f80c0fe, seed 223875204: a second `a` on
# the ablation drawn, as its answer's four seconds ran out on a busy machine), so it notifies as well.
BACK_S = 1.0


class DrawnInputs:
    """The inputs of the run under way (`asked`) and of the result on screen (`shown`): any comparable value
    (the live model's generation with the text, say); None for `shown` while nothing is drawn."""

    def __init__(self) -> None:
        self.asked: Any = None
        self.shown: Any = None

    def ask(self, key: Any) -> None:
        """A run of `key` starts: what is on screen is about to be replaced."""
        self.asked, self.shown = key, None

    def drawn(self) -> None:
        """The run asked for last has its result on screen."""
        self.shown = self.asked

    def forget(self) -> None:
        """Nothing on screen to answer with (a run failed, or its result belongs to another model): runs run."""
        self.shown = None

    def same(self, key: Any) -> bool:
        """Whether a run of `key` would draw what is on screen already. A None key (inputs a caller does not
        compare) is never the same."""
        return key is not None and key == self.shown


class Owner(Protocol):
    """The widget that says the answer: its timers and its notifications."""

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Any: ...
    def notify(self, message: str, *, title: str = "", timeout: float | None = None) -> None: ...


def shown_text(widget: Any, leaving: tuple = ()) -> list[str]:
    """The text the screen shows in `widget`'s region now, as composed at its last refresh: what a person sees
    there, whichever of the widget's children draws it. The rows of the widgets `leaving` are left out (a status
    line an answer is said on, the fields a press may come before the screen showed the last key typed into)."""
    region, rows = widget.region, screen_strips(widget)
    skipped = {y for w in leaving for y in range(w.region.y, w.region.bottom)}
    return [rows[y].crop(region.x, region.right).text for y in range(region.y, region.bottom) if y not in skipped]


def refuse(owner: Owner, say: Callable[[str], None], shown: str, text: str, title: str) -> None:
    """Say `text` (a refusal, markup allowed) with `say` where `shown` is said now; said again, it notifies as
    well, or the press changed nothing on screen (the crawler's long tier: r on a refused pair, d twice)."""
    if shown == text:
        owner.notify(Text.from_markup(text).plain, title=title, timeout=SAY_S)
    say(text)


class Answer:
    """Says a line in the place of a status line (`say` writes it, `now` reads it) for `seconds`, then puts back
    the line it replaced, unless something else was said meanwhile. Asked again while the line says it, it
    notifies as well: a second press shows something too."""

    def __init__(self, owner: Owner, say: Callable[[str], None], now: Callable[[], str],
                 seconds: float = SAY_S) -> None:
        self.owner, self.say, self.now, self.seconds = owner, say, now, seconds
        self.text, self.before, self.timer = "", "", None
        self.back_at = float("-inf")  # when the line the answer replaced came back

    def __call__(self, text: str, pressed_on: str | None = None) -> None:
        """`pressed_on`: the line when the press came, for an answer that comes after work which said something
        meanwhile (a capture's progress): the very line put back is a press that showed nothing, so it notifies."""
        now = self.now()
        just_back = text == self.text and time.monotonic() - self.back_at < BACK_S
        if text in (now, pressed_on) or just_back:  # said already: a second press shows something too
            self.owner.notify(text, title="already shown", timeout=self.seconds)
        if now != text:  # (said already, the line under it stays the one to come back)
            if self.timer is None or now != self.text:  # not another answer of this one's showing
                self.before = now
            self.text = text
            self.say(text)
        if self.timer is not None:
            self.timer.stop()
        self.timer = self.owner.set_timer(self.seconds, self._back)

    def _back(self) -> None:
        self.timer = None
        if self.now() == self.text:
            self.say(self.before)
            self.back_at = time.monotonic()
