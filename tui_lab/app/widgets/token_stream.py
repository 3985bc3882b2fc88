"""The generated text as it streams, optionally with the probability of each chosen token."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static


@dataclass(frozen=True)
class Token:
    id: int
    piece: str  # its text
    prob: float | None  # the model's probability of it (None for beam search)


def prob_style(p: float) -> str:
    """Red for unlikely picks, through yellow, to green for confident ones."""
    if p >= 0.5:
        return "black on green3"
    if p >= 0.2:
        return "black on yellow3"
    if p >= 0.05:
        return "black on dark_orange3"
    return "white on red3"


class TokenStream(Static):
    """`start(prompt)`, then `add(token)` per token; `show_probs` toggles the per-token view."""

    DEFAULT_CSS = "TokenStream { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        self.prompt = ""
        self.tokens: list[Token] = []
        self.text = ""  # the decoded completion (whole-sequence decode: multi-byte characters come out right)
        self.show_probs = False
        self.note = ""

    def start(self, prompt: str) -> None:
        self.prompt, self.tokens, self.text, self.note = prompt, [], "", ""
        self.redraw()

    def add(self, token: Token, text: str) -> None:
        self.tokens.append(token)
        self.text = text
        self.redraw()

    def finish(self, text: str, note: str) -> None:
        self.text, self.note = text, note
        self.redraw()

    def toggle_probs(self) -> None:
        self.show_probs = not self.show_probs
        self.redraw()

    def render_text(self) -> Text:
        out = Text(self.prompt, style="bold")
        if self.show_probs:
            for tok in self.tokens:
                if tok.prob is None:
                    out.append(tok.piece, style="underline")
                else:
                    out.append(tok.piece, style=prob_style(tok.prob))
                    out.append(f"{tok.prob:.2f}", style="dim italic")
        else:
            out.append(self.text, style="cyan")
        if self.note:
            out.append("\n" + self.note, style="dim")
        return out

    def redraw(self) -> None:
        self.update(self.render_text())
