""""Open a Hugging Face model...": ask for a model id or a folder (the palette's entry)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label

from tui_lab.app.widgets.field_input import FieldInput


@dataclass(frozen=True)
class HubRequest:
    spec: str  # a model id (gpt2) or a local folder, as typed
    allow_pickle: bool


class HubIdModal(ModalScreen["HubRequest | None"]):
    """Dismisses with a HubRequest, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    HubIdModal { align: center middle; }
    HubIdModal > Vertical { width: 72; max-width: 100%; height: auto; border: thick $accent; background: $surface;
                            padding: 0 1; }
    HubIdModal Input { margin-top: 1; }
    HubIdModal Horizontal { height: auto; margin-top: 1; }
    HubIdModal Button { margin-right: 1; }
    """

    def __init__(self, allow_pickle: bool = False) -> None:
        super().__init__()
        self.allow_pickle = allow_pickle

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Open a Hugging Face model: a model id (gpt2, gpt2-medium, distilgpt2) or a folder.\n"
                        "A model not in the local cache shows its files and size before anything downloads.")
            yield FieldInput(placeholder="gpt2", id="hub-id")
            yield Checkbox("accept pickle weights (pytorch_model.bin, read with weights_only)",
                           value=self.allow_pickle, id="hub-pickle")
            with Horizontal():
                yield Button("Open", id="hub-open", variant="primary")
                yield Button("Cancel (esc)", id="hub-id-cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#hub-open")
    def _open(self) -> None:
        spec = self.query_one(Input).value.strip()
        if not spec:
            self.notify("type a model id (like gpt2) or a folder", severity="warning")
            return
        self.dismiss(HubRequest(spec, self.query_one(Checkbox).value))

    @on(Button.Pressed, "#hub-id-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
