"""The completion as text: the prompt, then each generated token, shaded by its probability on request.

The text is the decode of the whole sequence (so a character split over two byte tokens comes out
whole); each token owns the span of it that appeared when it was added, and a token that only began a
character owns an empty span (the next one completes it). A cursor (left/right when focused, or the
mouse) picks a token; the view shows its probability and the top candidates of its step.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.visual import Visual
from textual.widget import Widget

from tui_lab.app.widgets.grid_cells import CURSOR_INK, ink, level, palette
from tui_lab.app.widgets.model_text import Folded

LEGEND_STOPS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Token:
    id: int
    piece: str  # its label: whitespace made visible, partial bytes as \xNN
    prob: float | None  # the model's probability of it (None for beam search)
    candidates: tuple[tuple[int, str, float], ...] = ()  # (id, label, prob), best first, of its step


def prob_style(p: float) -> Style:
    """The shade behind a token of probability p: the grids' colour scale on 0..1, ink that reads on it."""
    lvl = level(p, 0.0, 1.0) or 0
    return ink(lvl) + Style(bgcolor=palette()[lvl])


def legend() -> Text:
    """Which shade is which probability: a swatch of the scale at each stop, its value written on it."""
    out = Text("p ", style="dim")
    for p in LEGEND_STOPS:
        out.append(f" {p:g} ".replace("0.", "."), style=prob_style(p))
    return out


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class TokenStream(Widget, can_focus=True):
    """`start(prompt)`, then `add(token, text so far)` per token; `show_probs` shades them; a cursor picks one."""

    DEFAULT_CSS = "TokenStream { height: auto; }"
    BINDINGS = [
        Binding("left", "move(-1)", "previous token", show=False),
        Binding("right", "move(1)", "next token", show=False),
        Binding("home", "jump(0)", "first token", show=False),
        Binding("end", "jump(-1)", "last token", show=False),
    ]

    class CursorMoved(Message):
        """The token under the cursor changed (index into `tokens`)."""

        def __init__(self, stream: TokenStream, index: int) -> None:
            super().__init__()
            self.stream, self.index = stream, index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.prompt = ""
        self.tokens: list[Token] = []
        self.ends: list[int] = []  # where each token's span of `text` ends
        self.text = ""  # the decoded completion (whole-sequence decode: multi-byte characters come out right)
        self.show_probs = False
        self.note = ""
        self.cursor: int | None = None  # None: follow the newest token, drawn without a highlight

    def start(self, prompt: str) -> None:
        self.prompt, self.tokens, self.ends, self.text, self.note, self.cursor = prompt, [], [], "", "", None
        self.redraw()

    def add(self, token: Token, text: str) -> None:
        self.tokens.append(token)
        self._retext(text)
        self.ends.append(len(text))
        self.redraw()

    def finish(self, text: str, note: str) -> None:
        self._retext(text)
        self.note = note
        self.redraw()

    def _retext(self, text: str) -> None:
        """A longer decode can rewrite its tail (a replacement character becomes the whole character):
        spans that ended inside the rewritten part end where the texts still agree."""
        keep = common_prefix(self.text, text)
        self.ends = [min(end, keep) for end in self.ends]
        self.text = text

    def toggle_probs(self) -> None:
        self.show_probs = not self.show_probs
        self.redraw()

    # -- the cursor ----------------------------------------------------------------------------------
    @property
    def current(self) -> int | None:
        """The token the read-out describes: the cursor's, else the newest."""
        if not self.tokens:
            return None
        return self.cursor if self.cursor is not None else len(self.tokens) - 1

    def span(self, i: int) -> tuple[int, int]:
        return (self.ends[i - 1] if i else 0), self.ends[i]

    def move_cursor(self, index: int) -> None:
        if not self.tokens:
            return
        index = max(0, min(len(self.tokens) - 1, index))
        if index != self.cursor:
            self.cursor = index
            self.redraw()
        self.post_message(self.CursorMoved(self, index))

    def action_move(self, step: int) -> None:
        if self.current is not None:
            self.move_cursor(self.current + step)

    def action_jump(self, where: int) -> None:
        self.move_cursor(where if where >= 0 else len(self.tokens) - 1)

    def _token_at(self, event: events.MouseEvent) -> int | None:
        index = event.style.meta.get("token")
        return index if isinstance(index, int) and index < len(self.tokens) else None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        index = self._token_at(event)
        if index is not None:
            self.move_cursor(index)

    def on_click(self, event: events.Click) -> None:
        index = self._token_at(event)
        if index is not None:
            self.focus()
            self.move_cursor(index)

    # -- drawing -------------------------------------------------------------------------------------
    def _highlighted(self) -> int | None:
        """The token drawn under the cursor; an empty span (half a character) shows the token completing it."""
        if self.cursor is None:
            return None
        i = self.cursor
        while i < len(self.tokens) - 1 and self.span(i)[0] == self.span(i)[1]:
            i += 1
        return i

    def render_text(self) -> Text:
        out = Text()
        out.append(self.prompt, style="bold")
        marked = self._highlighted()
        for i, tok in enumerate(self.tokens):
            start, end = self.span(i)
            style = Style(meta={"token": i})
            if self.show_probs:
                style += prob_style(tok.prob) if tok.prob is not None else Style(underline=True)
            else:
                style += Style(color="cyan")
            if i == marked:  # shaded: the grids' cursor colour over the shade, which still says the probability
                style += CURSOR_INK + Style(underline=True) if self.show_probs else Style(reverse=True, bold=True)
            out.append(self.text[start:end], style=style)
        if self.note:
            out.append("\n" + self.note, style="dim")
        return out

    def render(self) -> Visual:
        # Folded as the compare boxes are: one cell short of the box's edge (a digit against the scrollbar read as a
        # number it cut: the long tier's English 80x24 walk, "…:/6▁▁"), and a run with no space wider than a line
        # (a random model's characters) breaks with the fold mark, as the boxes' do
        return Folded(Content.from_rich_text(self.render_text()))

    def redraw(self) -> None:
        """Marks the text stale: Textual draws it once per frame, however many tokens arrived in between
        (building it per token made a long run's UI fall behind its worker, and Stop with it)."""
        self.refresh(layout=True)


def describe(stream: TokenStream, sampling: str, cut: bool = False) -> Text:
    """The read-out of the current token: which, its probability, then its step's candidates, each shaded.

    With `cut` (top-k/top-p sampling) the token's own probability is the model's, before the cut, while the
    candidates' are what the sampler drew from, after it: the two differ, and the read-out says so."""
    i = stream.current
    if i is None:
        return Text("no tokens yet", style="dim")
    tok = stream.tokens[i]
    p = "beam search: no per-token probability" if tok.prob is None else f"p {tok.prob:.3f}"
    if cut and tok.prob is not None:
        p += " before top-k/top-p"
    head = "newest token" if stream.cursor is None else f"token {i + 1}/{len(stream.tokens)}"
    out = Text()
    out.append(f"{head}: ", style="dim")
    out.append(tok.piece, style="bold")
    out.append(f"  {p}")
    if tok.candidates:
        out.append(f"\ntop-{len(tok.candidates)} ({sampling}):", style="dim")
        for cand_id, label, prob in tok.candidates:
            out.append(" ")
            out.append(label, style=prob_style(prob) + Style(bold=cand_id == tok.id, underline=cand_id == tok.id))
            out.append(f" {prob:.3f}")
    return out
