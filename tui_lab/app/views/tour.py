"""Tour: seed 000's explainer, one step a page; each step sets up the live views, `g` jumps into them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from tui_lab.app.guard import guarded
from tui_lab.app.tour_steps import STEPS


class TourView(Vertical):
    BINDINGS = [
        Binding("n,right", "next", "next"),
        Binding("p,left", "back", "back"),
        Binding("g,enter", "go", "go"),
    ]
    can_focus = True

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.step = 0
        self.driven = -1  # the step whose drive last ran

    def compose(self) -> ComposeResult:
        yield Label("", id="tour-title")
        with VerticalScroll(id="tour-body-scroll"):
            yield Static("", id="tour-body")
        yield Static("", id="tour-nav")

    def on_mount(self) -> None:
        self.render_step()

    def view_activated(self) -> None:
        """Opening the tab drives the shown step once, then focus stays here for n/p/g."""
        if self.driven != self.step:
            self.show_step(self.step)
        self.focus()

    def render_step(self) -> None:
        step = STEPS[self.step]
        self.query_one("#tour-title", Label).update(f"Step {self.step + 1} of {len(STEPS)}: {step.title}")
        self.query_one("#tour-body", Static).update(step.text(self.app.live.config))
        dots = " ".join("●" if i == self.step else "○" for i in range(len(STEPS)))
        self.query_one("#tour-nav", Static).update(
            f"{dots}    n / → next · p / ← back · g / enter: open the {step.view} view")

    @guarded
    def show_step(self, index: int) -> None:
        self.step = max(0, min(len(STEPS) - 1, index))
        self.render_step()
        self.driven = self.step
        STEPS[self.step].drive(self.app)

    def action_next(self) -> None:
        self.show_step(self.step + 1)

    def action_back(self) -> None:
        self.show_step(self.step - 1)

    def action_go(self) -> None:
        if self.driven != self.step:
            self.show_step(self.step)
        self.app.show_view(STEPS[self.step].view)

    def palette_commands(self) -> list[tuple[str, str, object]]:
        return [("Tour: next step", "n", self.action_next), ("Tour: previous step", "p", self.action_back),
                ("Tour: open the step's view", "g", self.action_go)]

    def live_model_changed(self) -> None:
        self.render_step()  # numbers in the text follow the live config
