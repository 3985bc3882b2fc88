"""Quitting while training: save, quit without saving, or cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


class QuitWhileTraining(ModalScreen[str]):
    """Dismisses with SAVE, DISCARD or CANCEL."""

    BINDINGS = [Binding("escape", "choose('cancel')", "cancel"), Binding("s", "choose('save')", "save"),
                Binding("d", "choose('discard')", "quit without saving")]
    DEFAULT_CSS = """
    QuitWhileTraining { align: center middle; }
    QuitWhileTraining > Vertical { width: 76; height: auto; border: thick $warning; background: $surface;
                                   padding: 1 2; }
    QuitWhileTraining Horizontal { height: auto; margin-top: 1; }
    QuitWhileTraining Button { margin-right: 1; }
    """

    def __init__(self, detail: str, folder: str) -> None:
        super().__init__()
        self.detail, self.folder = detail, folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Training is running ({self.detail}).\nSave a checkpoint to {self.folder} before quitting?")
            with Horizontal():
                yield Button("Save and quit (s)", id=SAVE, variant="success")
                yield Button("Quit without saving (d)", id=DISCARD, variant="error")
                yield Button("Cancel (esc)", id=CANCEL)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
