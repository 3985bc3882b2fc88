"""Generate's logit lens (nostalgebraist 2020): the prompt read at every layer as if the model stopped there.

Rows are the residual stream before each block (`0_pre`, `1_pre`...) and after the last (`final`, the model's
own prediction), as TransformerLens's accumulated residual names them; columns are the prompt's tokens. A
cell's colour is the probability of the lens's top token there; the cursor's cell names its top-5 and the
probability the lens gives the token that really comes next. `l` in the Generate view runs it on the prompt.
"""

from __future__ import annotations

from typing import Any

from textual import on

from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.mechanism_panel import MechanismPanel


def point_label(point: str, last: bool) -> str:
    """`blocks.3.hook_resid_pre` -> `3_pre`; the stream after the last block -> `final`."""
    return "final" if last else f"{point.split('.')[1]}_pre"


def top_text(cell: list[dict[str, Any]]) -> str:
    return " · ".join(f"{c['token']!r} {c['prob']:.2f}" for c in cell)


class LensPanel(MechanismPanel):
    PREFIX = "lens"
    # r reads the prompt l gave it: a new prompt is the Generate view's, lensed with l
    SAME = "{key}: the lens shown is this prompt's already; edit the prompt, then l"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prompt = ""

    def inputs_key(self) -> Any:
        return self.app.live.generation, self.prompt

    def run(self) -> None:
        """The lens of the Generate view's prompt (the live model's tokenizer, or the byte fallback)."""
        self.show()  # shown at once, whatever follows: the completion it replaces is hidden already
        model = self.live_model()
        if model is None:
            return
        from tui_lab.app.views.generate.jobs import codec_for, encode_prompt

        tokenizer, prompt = self.app.live.tokenizer, self.prompt

        def work(step) -> Any:
            from tui_lab.mechanism.readouts import greedy_target, lens_of

            codec, _ = codec_for(model, tokenizer)
            ids = encode_prompt(model, codec, prompt)
            if model.config.family != "encoder-decoder":
                return lens_of(model, codec, ids, step)
            # the prompt is the source; the decoder's stream reads the model's own translation of it
            return lens_of(model, codec, greedy_target(model, codec, ids, "lens"), step, src=ids)

        self.start(work, 1, f"logit lens of {prompt!r}: every layer's stream through the final norm and "
                            "unembedding...")

    def draw(self, table: Any) -> None:
        values = [[cells[0]["prob"] for cells in row] for row in table.top]
        rows = [point_label(p, i == len(table.points) - 1) for i, p in enumerate(table.points)]
        self.grid.set_grid(values, rows, table.tokens, lo=0.0, hi=1.0, axes=("layer", "position"))
        final = table.top[-1][-1][0]
        self.say(f"logit lens: colour = the top token's probability (0 to 1) · the model says {final['token']!r} "
                 f"({final['prob']:.2f}) next · ←→↑↓ a cell · # numbers · esc back")

    @on(Heatmap.CellHighlighted, "#lens-map")
    def _moved(self, event: Heatmap.CellHighlighted) -> None:
        self.describe(event.row, event.col)

    def describe(self, row: int, col: int) -> None:
        table = self.result
        if table is None:
            return
        nxt = table.next_prob[row][col]
        after = "" if nxt is None else f" · next {table.tokens[col + 1]!r} {nxt:.2f}"
        self.cell(f"{point_label(table.points[row], row == len(table.points) - 1)} at {col} "
                  f"{table.tokens[col]!r}: top-5 {top_text(table.top[row][col])}{after}")
