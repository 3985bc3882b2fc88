"""The piece the Attention view and the mechanism panels share for a run asked for on the inputs whose result is
drawn (`widgets/drawn_inputs.py`): which inputs are on screen, and the line that says so for a while."""

from __future__ import annotations

from tui_lab.app.widgets.drawn_inputs import Answer, DrawnInputs


def test_only_the_inputs_of_a_drawn_result_are_the_same():
    drawn = DrawnInputs()
    assert not drawn.same(None) and not drawn.same((1, "text"))  # nothing drawn yet
    drawn.ask((1, "text"))
    assert not drawn.same((1, "text"))  # under way: not on screen yet
    drawn.drawn()
    assert drawn.same((1, "text")) and not drawn.same((2, "text")) and not drawn.same((1, "other"))
    drawn.ask((1, "other"))  # a new run: the result on screen is about to go
    assert not drawn.same((1, "text"))
    drawn.drawn()
    assert drawn.same((1, "other"))
    drawn.forget()  # failed, or another model's
    assert not drawn.same((1, "other"))
    drawn.ask(None)
    drawn.drawn()
    assert not drawn.same(None)  # inputs a caller does not compare always run


class Owner:
    """A widget's timers (run by hand) and notifications, and its status line."""

    def __init__(self) -> None:
        self.line, self.timers, self.notes = "before", [], []

    def set_timer(self, delay, callback):
        timer = Timer(callback)
        self.timers.append(timer)
        return timer

    def notify(self, message, *, title="", timeout=None):
        self.notes.append(message)

    def say(self, text: str) -> None:
        self.line = text

    def fire(self) -> None:
        for timer in self.timers:
            if not timer.stopped:
                timer.callback()
        self.timers.clear()


class Timer:
    def __init__(self, callback) -> None:
        self.callback, self.stopped = callback, False

    def stop(self) -> None:
        self.stopped = True


def test_the_answer_stays_a_while_then_the_line_it_replaced_comes_back():
    owner = Owner()
    answer = Answer(owner, owner.say, lambda: owner.line)
    answer("r: drawn already")
    assert owner.line == "r: drawn already" and owner.notes == []
    answer("r: drawn already")  # pressed again while it shows: a notification, so that press shows too
    assert owner.notes == ["r: drawn already"]
    answer("a: drawn already")  # another answer over the first: the line under both comes back
    owner.fire()
    assert owner.line == "before"


def test_a_line_said_meanwhile_is_not_replaced():
    owner = Owner()
    answer = Answer(owner, owner.say, lambda: owner.line)
    answer("r: drawn already")
    owner.say("capturing...")
    owner.fire()
    assert owner.line == "capturing..."


def test_said_again_as_the_line_comes_back_it_notifies():
    """The long tier's English 100x30 walk at f80c0fe (seed 223875204): the answer's seconds ran out as `a` came,
    before the screen showed the line back, so the answer said again left the screen as it was: a dead press."""
    owner = Owner()
    answer = Answer(owner, owner.say, lambda: owner.line)
    answer("a: drawn already")
    owner.fire()  # its time is up: the line it replaced comes back
    assert owner.line == "before" and owner.notes == []
    answer("a: drawn already")
    assert owner.line == "a: drawn already" and owner.notes == ["a: drawn already"]
    owner.fire()
    answer.back_at -= 5  # long after the line came back: the answer's return shows by itself
    answer("a: drawn already")
    assert owner.notes == ["a: drawn already"]
