"""A yes/cancel question before something that costs: a long run, or Apply over learned weights.

Cancel has focus, so Enter alone never commits; `y` answers yes and Escape or `n` cancels.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class Confirm(ModalScreen[bool]):
    """Dismisses True (yes) or False (cancel). Subclasses name the yes button and the widgets' ids."""

    YES = "Yes (y)"
    IDS = ("confirm-text", "confirm-yes", "confirm-cancel")  # text, yes button, cancel button
    BINDINGS = [Binding("escape,n", "choose(False)", "cancel"), Binding("y", "choose(True)", "yes")]
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical { width: 76; max-width: 100%; height: auto; border: thick $warning;
                         background: $surface; padding: 1 2; }
    Confirm Label { width: 100%; }
    Confirm Horizontal { height: auto; margin-top: 1; }
    Confirm Button { margin-right: 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        text_id, yes_id, cancel_id = self.IDS
        with Vertical():
            yield Label(self.text, id=text_id)
            with Horizontal():
                yield Button(self.YES, id=yes_id, variant="warning")
                yield Button("Cancel (esc)", id=cancel_id)

    def on_mount(self) -> None:
        self.query_one(f"#{self.IDS[2]}", Button).focus()  # the safe choice is the default one

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == self.IDS[1])

    def action_choose(self, yes: bool) -> None:
        self.dismiss(yes)
