"""The completion box of the Generate view: the text as it streams, the probability toggle and its legend, and
the read-out of the token under the cursor.

A widget the view drives (`start`, `add`, `finish`); it owns what the read-out needs (how the candidates'
distribution was made) and the status line's seed, and answers its own cursor and toggle. The read-out and
the scroll follow the newest token until the cursor moves.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from tui_lab.app.views.generate.token_stream import Token, TokenStream, describe, legend
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.generation.settings import GenerationSettings

ARROW = "→"  # between the source and its translation in the completion


class Completion(Vertical):
    """`#gen-out` (the TokenStream) in `#gen-out-scroll`, the `#gen-probs` toggle, `#gen-legend`, `#gen-token-info`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_subtitle = "↓ ←/→ or mouse: a token's top-5"
        self.sampling = ""  # how the candidates' distribution was made, for the read-out
        self.cut = False  # top-k/top-p sampling: the candidates' probabilities are after the cut
        self.seed = ""  # the stream's seed, for its status line ('' when nothing is drawn)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="gen-out-scroll") as scroll:
            scroll.can_focus = False  # the completion itself takes focus, for its cursor
            yield TokenStream(id="gen-out")
        with Horizontal(id="gen-probs-row"):  # the toggle beside the key to what it shows
            yield OnOffCheckbox("probs y", False, id="gen-probs", compact=True)
            yield Static(id="gen-legend")
        yield Static(id="gen-token-info")

    def on_mount(self) -> None:
        self._draw_legend()
        self.app.theme_changed_signal.subscribe(  # the legend's and the read-out's shades follow the theme
            self, lambda _: (self._draw_legend(), self.stream.tokens and self._describe()))

    @property
    def stream(self) -> TokenStream:
        return self.query_one(TokenStream)

    def start(self, prefix: str, s: GenerationSettings, seed: str = "") -> None:
        """A new stream after `prefix` (the prompt, or the source and an arrow), decoded with `s`; `seed` names
        its seed on the status line ('seed 4821, drawn ...', `form.seed_text`)."""
        self.sampling, self.seed = sampling_text(s), seed
        self.cut = s.beam_size == 1 and s.temperature > 0 and bool(s.top_k or s.top_p)
        self.stream.start(prefix)
        self._describe()

    def add(self, token: Token, text: str) -> None:
        """One more token; `text` is the whole completion so far."""
        self.stream.add(token, text)
        if self.stream.cursor is None:  # the read-out and the scroll follow the newest token until the cursor moves
            self._describe()
            self.query_one("#gen-out-scroll").scroll_end(animate=False)

    def stopping(self) -> None:
        """Stop was pressed: said at once, since the pass under way ends first (a large model's first pass can
        take seconds, and the stream showed "no tokens yet" with nothing but Stop's colour changed)."""
        self.stream.finish(self.stream.text, "stopping after the pass under way...")

    def finish(self, text: str, note: str, cancelled: bool) -> None:
        """The whole completion, and the status line: the job's note, the seed, and whether Stop cut it."""
        seed = f"; {self.seed}" if self.seed else ""
        self.stream.finish(text, note + seed + (" - stopped" if cancelled else ""))

    def toggle_probs(self) -> None:
        box = self.query_one("#gen-probs", OnOffCheckbox)
        box.value = not box.value

    @on(OnOffCheckbox.Changed, "#gen-probs")
    def _probs_changed(self, event: OnOffCheckbox.Changed) -> None:
        if self.stream.show_probs != event.value:
            self.stream.toggle_probs()
        self._draw_legend()

    def _draw_legend(self) -> None:
        self.query_one("#gen-legend", Static).update(legend() if self.stream.show_probs else "")

    @on(TokenStream.CursorMoved)
    def _describe(self) -> None:
        self.query_one("#gen-token-info", Static).update(describe(self.stream, self.sampling, self.cut))


def stream_prefix(prompt: str, family: str, translating: bool) -> str:
    """What the completion shows before the new tokens: a decoder-only model continues its prompt; an
    encoder-decoder writes a target for its source, on the next line when it translates."""
    if family == "decoder-only":
        return prompt
    return f"{prompt} {ARROW}\n" if translating else f"[{prompt}] -> "


def sampling_text(s: GenerationSettings) -> str:
    """What the candidates' probabilities are: the distribution the token was drawn from."""
    if s.beam_size > 1:
        return "beam search"
    if s.temperature == 0:
        return "greedy, at T 1"
    cuts = "".join(f", {name} {value:g}" for name, value in (("top-k", s.top_k), ("top-p", s.top_p)) if value)
    return f"T {s.temperature:g}{cuts}"
