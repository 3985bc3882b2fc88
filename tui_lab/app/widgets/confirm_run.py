"""Before a long run: the estimate, and start or cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmLongRun(ModalScreen[bool]):
    """Dismisses True (start) or False (cancel)."""

    BINDINGS = [Binding("escape,n", "choose(False)", "cancel"), Binding("y", "choose(True)", "start")]
    DEFAULT_CSS = """
    ConfirmLongRun { align: center middle; }
    ConfirmLongRun > Vertical { width: 76; max-width: 100%; height: auto; border: thick $warning;
                                background: $surface; padding: 1 2; }
    ConfirmLongRun Label { width: 100%; }
    ConfirmLongRun Horizontal { height: auto; margin-top: 1; }
    ConfirmLongRun Button { margin-right: 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.text, id="confirm-text")
            with Horizontal():
                yield Button("Start (y)", id="confirm-start", variant="warning")
                yield Button("Cancel (esc)", id="confirm-cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm-cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-start")

    def action_choose(self, start: bool) -> None:
        self.dismiss(start)
