"""Generate's activation patching (Meng et al. 2022; Wang et al. 2022): two prompts of one length, and where
the clean one's answer lives.

The corrupted prompt runs with the clean run's residual stream (`hook_resid_pre`) put back at one layer and
one position; a cell is how much of the clean logit difference logit(answer) - logit(wrong) at the last
position comes back: 1 that point alone restores the answer, 0 that it carries nothing of it. An empty
answer is the clean run's own top prediction, an empty wrong the corrupted run's. `p` opens it. For an
encoder-decoder the two prompts are two sources and both runs read the clean source's own translation: the
columns are that translation's tokens, the rows the decoder's layers.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Label, Static

from tui_lab.app.views.generate.lens_panel import point_label
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.mechanism_panel import MechanismPanel

# One word changed mid-sentence, whole words and the same number of tokens in the shipped English toy, which
# answers ' hill' to the clean prompt and ' town' to the corrupted one (measured): layer 0 carries the place at
# ' river' / ' hill', layer 1 has moved it to the last position. (A pair differing in the last token only fills
# the last column with 1.0 at every layer, which shows nothing.)
DEFAULT_CLEAN = "Anna walked to the river. Tom walked to the"
DEFAULT_CORRUPT = "Anna walked to the hill. Tom walked to the"
FIELDS = ("clean", "corrupt", "answer", "wrong")


class PatchPanel(MechanismPanel):
    PREFIX = "patch"
    DEFAULT_CSS = """
    PatchPanel #patch-warning { height: auto; max-height: 4; color: $warning; display: none; }
    PatchPanel #patch-warning.-on { display: block; }
    """

    def compose(self) -> ComposeResult:
        """The panel's parts, and under its summary the line that says when the pair's gap cannot carry a
        recovery (the core's `gap_warning`, as `tui-lab patch` prints it)."""
        for widget in super().compose():
            yield widget
            if widget.id == "patch-summary":
                yield Static("", id="patch-warning", markup=False)

    def warn(self, text: str | None) -> None:
        line = self.query_one("#patch-warning", Static)
        line.update(text or "")
        line.set_class(bool(text), "-on")

    def compose_inputs(self) -> ComposeResult:
        with Horizontal(classes="mech-row"):
            yield Label("clean", classes="mech-name")
            yield FieldInput(DEFAULT_CLEAN, id="patch-clean", compact=True)
            yield Label("corrupt", classes="mech-name")
            yield FieldInput(DEFAULT_CORRUPT, id="patch-corrupt", compact=True)
        with Horizontal(classes="mech-row"):
            yield Label("answer", classes="mech-name")
            yield FieldInput("", placeholder="its top token", id="patch-answer", compact=True)
            yield Label("wrong", classes="mech-name")
            yield FieldInput("", placeholder="corrupt's top", id="patch-wrong", compact=True)
            yield Button("Run r", id="patch-run", variant="primary", compact=True)
            yield Button("Cancel x", id="patch-cancel", variant="error", compact=True)

    SAME = "{key}: this patching is these prompts' already; edit them (i or Tab), then r"

    def inputs_key(self) -> Any:
        return self.app.live.generation, *(self.value(name) for name in ("clean", "corrupt", "answer", "wrong"))

    def value(self, name: str) -> str:
        return self.query_one(f"#patch-{name}", Input).value

    def open_with(self, prompt: str) -> None:
        """Shown with the clean prompt filled in (when empty), the grid focused: r runs, x cancels, and no key
        named on the screen types into a prompt (the corrupted one opened focused and selected, and `r` made it
        "corrupt r"); i or Tab goes into the prompts, Esc back to the grid."""
        if not self.value("clean").strip():
            self.query_one("#patch-clean", Input).value = prompt
        self.show()
        if self.result is None:
            self.say("clean vs corrupt: r runs · i or Tab edits the prompts, Esc comes back")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run()

    def run(self) -> None:
        self.warn(None)  # the last pair's
        model = self.live_model()
        if model is None:
            return
        from tui_lab.app.views.generate.jobs import codec_for, encode_prompt

        tokenizer, texts = self.app.live.tokenizer, {name: self.value(name) for name in FIELDS}
        try:
            from tui_lab.mechanism.cache import require_stream

            require_stream(model.config, "patching")
            codec, _ = codec_for(model, tokenizer)
            clean, corrupt = (encode_prompt(model, codec, texts[n]) for n in ("clean", "corrupt"))
        except ValueError as err:
            self.refuse(f"[red]not run:[/red] {err}")
            return
        if len(clean) != len(corrupt) and model.config.family != "encoder-decoder":  # two sources: any lengths
            self.refuse(f"[red]not run:[/red] corrupt must be as many tokens as clean ({len(corrupt)} and "
                        f"{len(clean)})")
            return

        def work(step) -> Any:
            from tui_lab.mechanism.readouts import patching_of

            return patching_of(model, codec, clean, corrupt, texts["answer"], texts["wrong"], step)

        self.start(work, model.config.decoder_layers, f"patching {len(clean)} positions x "
                                                      f"{model.config.decoder_layers} layers...")

    def draw(self, result: Any) -> None:
        t = result.table
        rows = [point_label(p, last=False) for p in t.points]
        self.grid.set_grid(t.values, rows, result.tokens, axes=("layer", "position"))
        # A warning names both values (3 decimals): the summary then leaves them out and keeps to one line at
        # 80 columns, so the warning's lines come out of no layer's row.
        values = "" if t.warning else f" · clean {t.ld_clean:.2f}, corrupt {t.ld_corrupt:.2f}"
        self.say(f"patching: share of logit({result.answer!r}) - logit({result.wrong!r}) restored{values} · esc back")
        self.warn(t.warning)

    @on(Heatmap.CellHighlighted, "#patch-map")
    def _moved(self, event: Heatmap.CellHighlighted) -> None:
        self.describe(event.row, event.col)

    def describe(self, row: int, col: int) -> None:
        if self.result is None:
            return
        t = self.result.table
        self.cell(f"clean resid_pre of layer {row} at {col} {self.result.tokens[col]!r} restores "
                  f"{t.values[row][col]:.2f} of the difference")
