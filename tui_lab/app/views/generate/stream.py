"""What the Generate view does with its workers' messages: the completion, the attention grid, the boxes.

A mixin of GenerateView (which provides `job`, `running`, `context`, `rows`, `row_labels`, `cross`, `copy`,
`translating`, `results`, `versus_done` and `_describe`). Every message names its job; one from a job that
a newer Generate, Compare or Side by side replaced is dropped, so a late token never lands in a new stream.
The attention grid grows one row per new token, as the KV cache does.
"""

from __future__ import annotations

import math

from textual.markup import escape
from textual.widgets import Static

from tui_lab.app.views.generate import jobs, versus
from tui_lab.app.views.generate.token_stream import Token, TokenStream
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.generation.settings import GenerationSettings

ARROW = "→"  # between the source and its translation in the completion


class GenerateStream:
    def on_started(self, message: jobs.Started) -> None:
        if message.job == self.job:
            self.context, self.cross, self.copy = list(message.context), message.cross, message.copy
            what = "cross-attention: new tokens x source" if self.cross else \
                "attention: new tokens x context (a row per step, like the KV cache)"
            if self.cross and self.translating:
                what = "cross-attention: target x source"
            if self.copy:
                what = "copy: (1-p_gen) x attention over the source; row: token p_gen"
            self.query_one("#gen-att-box").border_title = what

    def on_new_token(self, message: jobs.NewToken) -> None:
        if message.job != self.job:
            return
        stream = self.query_one(TokenStream)
        stream.add(Token(message.token_id, message.label, message.prob, message.candidates), message.text)
        if stream.cursor is None:  # the read-out and the scroll follow the newest token until the cursor moves
            self._describe()
            self.query_one("#gen-out-scroll").scroll_end(animate=False)
        if message.row is not None:
            self.rows.append((len(self.context), message.row))
            self.row_labels.append(row_label(message.label, message.p_gen))
        if not self.cross:
            self.context.append(message.label)
        if message.row is not None:
            self._draw_grid()

    def _draw_grid(self) -> None:
        """One row per new token over the whole context; a row's keys end where the context ended when it
        was computed, and a sliding window (learned positions) starts them later."""
        width = len(self.context)
        grid, mask = [], []
        for end, row in self.rows:
            start = max(0, end - len(row))
            grid.append([math.nan] * start + row[len(row) - (end - start):] + [math.nan] * (width - end))
            mask.append([not start <= c < end for c in range(width)])
        masked = mask if any(any(m) for m in mask) else None
        axes = ("translation", "source") if self.cross and self.translating else ("new token", "context")
        self.query_one("#gen-att", Heatmap).set_grid(grid, self.row_labels, self.context, lo=0.0, mask=masked,
                                                     axes=axes)

    def on_finished(self, message: jobs.Finished) -> None:
        if message.job == self.job:
            self.running = False
            note = message.note + (" - stopped" if message.cancelled else "")
            self.query_one(TokenStream).finish(message.text, note)

    def on_compare_result(self, message: jobs.CompareResult) -> None:
        if message.job != self.job:
            return
        self.results[message.mode] = message.text
        # The settings under the text, not in the box's title, which a narrow box cut ("top-p (T 0.8…").
        self.query_one(f"#gen-mode-{message.mode}", Static).update(
            f"{escape(message.text)}\n[dim]{message.detail}\n{message.seconds:.2f} s[/]")
        if len(self.results) == len(jobs.MODES):
            self.running = False

    def on_versus_result(self, message: versus.VersusResult) -> None:
        if message.job != self.job:
            return
        self.query_one(versus.VersusPanel).show(message)
        self.versus_done.add(message.side)
        if self.versus_done == set(versus.SIDES):
            self.running = False

    def on_generate_failed(self, message: jobs.GenerateFailed) -> None:
        if message.job == self.job:
            self.running = False
            self.notify(message.error, title="generate", severity="error", timeout=8)


def stream_prefix(prompt: str, family: str, translating: bool) -> str:
    """What the completion shows before the new tokens: a decoder-only model continues its prompt; an
    encoder-decoder writes a target for its source, on the next line when it translates."""
    if family == "decoder-only":
        return prompt
    return f"{prompt} {ARROW}\n" if translating else f"[{prompt}] -> "


def row_label(label: str, p_gen: float | None) -> str:
    """A grid row's label; a copy model's says how much of the token was generated (p_gen) vs copied."""
    return label if p_gen is None else f"{label} {p_gen:.2f}"


def sampling_text(s: GenerationSettings) -> str:
    """What the candidates' probabilities are: the distribution the token was drawn from."""
    if s.beam_size > 1:
        return "beam search"
    if s.temperature == 0:
        return "greedy, at T 1"
    cuts = "".join(f", {name} {value:g}" for name, value in (("top-k", s.top_k), ("top-p", s.top_p)) if value)
    return f"T {s.temperature:g}{cuts}"
