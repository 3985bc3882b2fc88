"""The Generate view's compare boxes: greedy, top-k, top-p and beam on one prompt, side by side (`m`).

A widget the view drives: `waiting` empties the boxes as the job starts, `show` fills one box per
`jobs.CompareResult` (its text, settings and time) and says when all four are in. Each text is a `ModelText`:
folded one cell short of the box's border, a run with no space folding with a mark (widgets/model_text.py).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content

from tui_lab.app.views.generate import jobs
from tui_lab.app.widgets.model_text import ModelText, drawable


class ComparePanel(Horizontal):
    """A box per mode, `#gen-box-<mode>` holding `#gen-mode-<mode>`; `results` the texts so far."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        for mode in jobs.MODES:
            with VerticalScroll(classes="gen-mode", id=f"gen-box-{mode}") as box:
                box.border_title = mode
                yield ModelText("", id=f"gen-mode-{mode}")

    def waiting(self) -> None:
        """A new comparison: `...` in each box until its text comes."""
        self.results = {}
        for mode in jobs.MODES:
            self.query_one(f"#gen-mode-{mode}", ModelText).update("...")

    def stopped(self) -> None:
        """s before every mode was in: the boxes still to come say so (the job posts nothing more; a sampled
        mode stops between tokens, beam search at its end). The long tier's translator 160x48 walk at a3f1987
        (seed 730475785) pressed s with the beam box at "..." and nothing on screen changed."""
        for mode in jobs.MODES:
            if mode not in self.results:
                self.query_one(f"#gen-mode-{mode}", ModelText).update(jobs.STOPPED)

    def show(self, result: jobs.CompareResult) -> bool:
        """One mode's text, settings and time; True once every mode is in. The settings go under the text, not
        in the box's title, which a narrow box cut ("top-p (T 0.8…")."""
        self.results[result.mode] = result.text
        # The text as a template's variable, never as markup: textual's escape() leaves a lone "[" (a byte-level
        # token's) that swallowed the [dim] after it and raised, ending the app.
        self.query_one(f"#gen-mode-{result.mode}", ModelText).update(Content.from_markup(
            "$text\n[dim]$detail\n$seconds s[/]", text=drawable(result.text), detail=result.detail,
            seconds=f"{result.seconds:.2f}"))
        return len(self.results) == len(jobs.MODES)
