"""Before Apply replaces learned weights: say what is lost, then Apply anyway or Cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


def apply_warning(origin_text: str, shipped: str | None = None) -> str:
    """`shipped`: the form names an unedited shipped toy, so Apply loads its weights rather than random ones."""
    after = f"the shipped toy {shipped}'s trained weights" if shipped else "random weights"
    return (f"The live model holds {origin_text}.\n"
            f"Apply builds a new model from the form with {after}: what this one learned is not carried "
            "over. To keep it, cancel and save it first (w in the Train view).")


class ConfirmApply(ModalScreen[bool]):
    """Dismisses True (apply anyway) or False (cancel: the live model stays)."""

    BINDINGS = [Binding("escape,n", "choose(False)", "cancel"), Binding("y", "choose(True)", "apply anyway")]
    DEFAULT_CSS = """
    ConfirmApply { align: center middle; }
    ConfirmApply > Vertical { width: 76; max-width: 100%; height: auto; border: thick $warning;
                              background: $surface; padding: 1 2; }
    ConfirmApply Label { width: 100%; }
    ConfirmApply Horizontal { height: auto; margin-top: 1; }
    ConfirmApply Button { margin-right: 1; }
    """

    def __init__(self, origin_text: str, shipped: str | None = None) -> None:
        super().__init__()
        self.text = apply_warning(origin_text, shipped)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.text, id="apply-warning")
            with Horizontal():
                yield Button("Apply anyway (y)", id="apply-anyway", variant="warning")
                yield Button("Cancel (esc)", id="apply-cancel")

    def on_mount(self) -> None:
        self.query_one("#apply-cancel", Button).focus()  # the safe choice is the default one

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "apply-anyway")

    def action_choose(self, apply: bool) -> None:
        self.dismiss(apply)
