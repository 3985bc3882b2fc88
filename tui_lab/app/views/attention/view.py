"""Attention: type a sentence (and a target), see every grid the live model computes, and the masks.

Without a tokenizer (a random preset) words are split on spaces and hashed to ids (`grids.hash_ids`):
the weights are random, so the grids show what an UNTRAINED model does. A loaded model whose tokenizer
lacks the typed words gets text from its own data instead (`capture.model_inputs`). The
capture runs in a thread worker; grids arrive as a message. `m` shows every layer x head at once.
The inputs, the pickers and the drawing are mixins beside this file (`inputs`, `pickers`,
`draw`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Input, Label, Static
from textual.worker import get_current_worker

from tui_lab.app import grids
from tui_lab.app.examples import SOURCE_TEXT
from tui_lab.app.guard import guarded
from tui_lab.app.views.attention import capture as work
from tui_lab.app.views.attention import mlm, vit
from tui_lab.app.views.attention.draw import AttentionDrawing
from tui_lab.app.views.attention.grids import MASKS, Capture
from tui_lab.app.views.attention.inputs import TARGET_TEXT, Inputs
from tui_lab.app.views.attention.inside_head import InsideHead, Pointer
from tui_lab.app.views.attention.mechanism import AttentionMechanism
from tui_lab.app.views.attention.patch_image import PatchImage
from tui_lab.app.views.attention.pickers import Pickers
from tui_lab.app.views.attention.small_multiples import SmallMultiples
from tui_lab.app.widgets.heatmap import QUIET_KEYS, Heatmap
from tui_lab.paths import exports_dir


class AttentionMap(Heatmap):
    """The view's grid: its # and z are on the hint line under it, so the footer keeps the view's keys."""

    BINDINGS = QUIET_KEYS


class AttentionView(Inputs, Pickers, AttentionDrawing, AttentionMechanism, Vertical):
    # The footer has room for three keys beside f1..f7 and q quit at 80 columns: the pickers'. The hint line
    # under the grid names #, z, m and e; the Run button names r.
    BINDINGS = [
        Binding("e", "export", "export JSON", show=False),
        Binding("r", "run", "run", show=False),
        Binding("k", "cycle_kind", "grid"),
        Binding("l", "cycle_layer", "layer"),
        Binding("h", "cycle_head", "head"),
        Binding("m", "model_view", "all heads", show=False),
        Binding("a", "ablate", "ablate heads", show=False),
        Binding("d", "attribute", "logit attribution", show=False),
        Binding("c", "inside_head", "inside one head", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cap = Capture()
        self.pending_cursor: tuple[str, str] | None = None
        self.pending_kind: str | None = None
        self.captured_generation = -1
        self.last_export: Path | None = None
        self._choices: dict[str, list] = {}
        self.image: tuple[list[list[float]], str] | None = None  # a ViT's image (grey pixels) and caption
        self._title = ("", "")  # the title line's whole text and its grid's kind, fitted on every resize

    # the fields other views and tests read
    @property
    def grids(self) -> dict[tuple[str, int], list]:
        return self.cap.grids

    @property
    def src(self) -> list[str]:
        return self.cap.src

    @property
    def tgt(self) -> list[str]:
        return self.cap.tgt

    def compose(self) -> ComposeResult:
        yield from self.compose_inputs()
        yield from self.compose_pickers()
        yield Label("", id="att-title")
        yield PatchImage(id="att-image")
        yield AttentionMap(id="att-map")
        yield InsideHead(id="att-inside")
        yield SmallMultiples(id="att-model")
        yield from self.compose_mechanism()
        yield Static("", id="att-info")

    def on_mount(self) -> None:
        self.query_one(SmallMultiples).display = False
        self.query_one(PatchImage).display = False
        self.query_one(InsideHead).display = False
        self._set_defaults()
        self._fill_kinds()
        self.live_model_changed()

    def home(self) -> Heatmap | SmallMultiples:
        """The grid on screen: its arrows, #, z and the view's k, l, h, m act as soon as the view opens."""
        gallery = self.query_one(SmallMultiples)
        return gallery if gallery.display else self.query_one(Heatmap)

    # -- the live model ----------------------------------------------------------------------------
    @property
    def encoder_decoder(self) -> bool:
        return self.app.live.config.family == "encoder-decoder"

    def live_model_changed(self) -> None:
        """Rebuilt or loaded: redraw the inputs for the family and capture again."""
        self._show_target()
        self._default_for_mlm()
        target = self.query_one("#att-tgt", Input)
        if self.encoder_decoder and target.value in ("", TARGET_TEXT):  # untouched: the new model's default
            target.value = self.default_target()
            if not target.value and self._untouched():  # a translation model gets seed 000's sentence to translate
                self.query_one("#att-src", Input).value = SOURCE_TEXT
        self.cap = Capture(encoder_decoder=self.encoder_decoder)
        self._fill_kinds()
        if not self.app.live.ready:
            self._info(f"the live model is not ready yet ({self.app.live.status})")
        elif not self._fit_inputs_to_tokenizer():
            self.action_run()

    # -- running -----------------------------------------------------------------------------------
    def set_inputs(self, source: str, target: str | None = None, kind: str | None = None,
                   cursor: tuple[str, str] | None = None) -> None:
        """For the tour: fill the inputs, then select `kind` and put the cursor on (query, key) tokens."""
        self.query_one("#att-src", Input).value = source
        if target is not None:
            self.query_one("#att-tgt", Input).value = target
        self.pending_kind, self.pending_cursor = kind, cursor
        if kind in MASKS or kind == "pos-learned":
            self._select_kind(kind)
        if self.app.live.ready:
            self.action_run()

    @guarded
    def action_run(self) -> None:
        live = self.app.live
        if not live.ready:
            self._info(f"the live model is not ready yet ({live.status})")
            return
        if vit.is_vit(live.config):
            self._run_image(live)
            return
        self.image = None
        src_ids, src, tgt_ids, tgt, predicted = self._ids()
        model, generation, tokenizer = live.model, live.generation, live.tokenizer
        guess = mlm.is_mlm(live.config) and tokenizer is not None
        translate, limit = self.translating, min(grids.MAX_TOKENS, live.config.max_len - 1)
        self._info("translating, then capturing attention..." if translate else "capturing attention...")

        def run() -> None:
            try:
                target = work.translation(model, tokenizer, src_ids, limit) if translate else \
                    (tgt_ids, tgt, predicted, None)
                result, entropy, learned = work.capture(model, src_ids, target[0])
                guesses = mlm.predictions(model, src_ids, tokenizer) if guess else None
            except Exception as err:  # noqa: BLE001 - shown inline, never a crash
                self.post_message(work.CaptureFailed(str(err).splitlines()[0] if str(err) else type(err).__name__))
                return
            if not get_current_worker().is_cancelled:
                self.post_message(work.Captured(result, entropy, src, target[1], target[2], learned, generation,
                                                guesses, translation=target[3], inputs=(model, src_ids, target[0])))

        self.run_worker(run, thread=True, exclusive=True, group="attention", exit_on_error=False)

    def _run_image(self, live) -> None:
        """A ViT: capture on a held-out image of the shapes task; the grid's labels are the patches."""
        index = vit.image_index(self.query_one("#att-src", Input).value)
        model, config, generation = live.model, live.config, live.generation
        self._info("capturing attention...")

        def run() -> None:
            try:
                result, entropy, pixels, caption, image = vit.capture_image(model, config, index)
            except Exception as err:  # noqa: BLE001 - shown inline, never a crash
                self.post_message(work.CaptureFailed(str(err).splitlines()[0] if str(err) else type(err).__name__))
                return
            if not get_current_worker().is_cancelled:
                self.image = (pixels, caption)
                labels = vit.patch_labels(config)
                self.post_message(work.Captured(result, entropy, labels, [], [], None, generation,
                                                inputs=(model, image, None)))

        self.run_worker(run, thread=True, exclusive=True, group="attention", exit_on_error=False)

    def on_captured(self, message: work.Captured) -> None:
        first = not self.cap.grids
        self.cap = Capture(message.grids, message.entropy, message.src, message.tgt, message.predicted,
                           message.learned, self.encoder_decoder)
        self.captured_generation = message.generation
        if message.inputs is not None:
            self.query_one(InsideHead).follow(*message.inputs)
        self._fill_kinds()
        if first and not self.pending_kind:  # a translation opens on its cross-attention (target x source)
            self._select_kind("cross" if message.translation is not None else self.kinds()[0])
            if self.learned_head() is not None:  # a shipped toy opens on the head meta.json names
                self.choose(*self.learned_head())
        if self.pending_kind:
            self._select_kind(self.pending_kind)
            self.pending_kind = None
        self.redraw()
        if self.pending_cursor:
            self.point_at(*self.pending_cursor)
            self.pending_cursor = None
        if message.guesses is not None:  # BERT: the cursor on the [MASK] row, its guesses under the grid
            if message.guesses:
                self.query_one(Heatmap).move_cursor(message.guesses[0][0], message.guesses[0][0])
            self._info(mlm.describe(message.guesses))
            return
        if message.translation is not None:  # say whose target the decoder read: the model's own
            self._info(f"decoder input = the model's own greedy translation: {message.translation!r} · "
                       + self._hint())
            return
        self._info(self._hint())

    # -- inside one head -----------------------------------------------------------------------------
    # Where the view is short (80x24) the panel takes the grid's place and its arrows move the grid's cursor.
    SHORT = 30

    def action_inside_head(self) -> None:
        panel, heatmap = self.query_one(InsideHead), self.query_one(Heatmap)
        panel.display = not panel.display
        self.query_one(SmallMultiples).display = False
        self._make_room()
        self._point_inside()
        if panel.display:
            panel.opened()
        (heatmap if heatmap.display else panel).focus()
        self._info(self._hint())

    def _make_room(self) -> None:
        """A short view shows the open panel in the grid's (and a ViT image's) place."""
        crowded = self.query_one(InsideHead).display and self.size.height < self.SHORT
        self.query_one(Heatmap).display = not crowded
        if crowded:
            self.query_one(PatchImage).display = False

    def redraw(self) -> None:
        super().redraw()
        self._make_room()
        self._point_inside()

    def _point_inside(self) -> None:
        heatmap, (kind, layer, head) = self.query_one(Heatmap), self.choice()
        row, col = heatmap.cursor
        self.query_one(InsideHead).point(Pointer(kind, layer, head, row, col, heatmap.row_labels,
                                                 heatmap.col_labels))

    def on_heatmap_cell_highlighted(self, message: Heatmap.CellHighlighted) -> None:
        self._point_inside()

    def on_inside_head_move(self, message: InsideHead.Move) -> None:
        self.query_one(Heatmap).action_move(message.d_row, message.d_col)

    def on_capture_failed(self, message: work.CaptureFailed) -> None:
        self._info(f"[red]capture failed:[/red] {message.error}")

    @guarded
    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_run()

    @guarded
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "att-run":
            self.action_run()

    def _hint(self) -> str:
        if self.query_one(SmallMultiples).display:  # ⏎ is off the footer, which keeps q quit
            return "arrows or mouse: a tile · ⏎ open it full size · m back to the grid"
        if self.query_one(InsideHead).display:  # at 80 columns each hint fits one line
            return "arrows: query ↑↓, key ←→ · h head · l layer · c back to the grid"
        if self.size.width < 100:  # DLA: direct logit attribution (the palette says it whole)
            return "# numbers · z dense · m heads · c inside · a ablate · d DLA · e export"
        return "arrows or mouse: a cell · # numbers · z dense · m all heads · c one head · a ablate · " \
               "d attribution · e export"

    def _info(self, text: str) -> None:
        self.query_one("#att-info", Static).update(text)

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        heatmap = self.query_one(Heatmap)
        return [("Attention: run the capture", "r", self.action_run),
                ("Attention: export the grid", f"e: JSON in {exports_dir(create=False)}", self.action_export),
                ("Attention: next grid kind", "k", self.action_cycle_kind),
                ("Attention: next layer", "l", self.action_cycle_layer),
                ("Attention: next head", "h", self.action_cycle_head),
                ("Attention: every layer x head (model view)", "m", self.action_model_view),
                ("Attention: each head's loss change when ablated", "a", self.action_ablate),
                ("Attention: each head's direct logit attribution", "d", self.action_attribute),
                ("Attention: inside one head (q·k, √d_k, mask, softmax, Σ p·v)", "c", self.action_inside_head),
                ("Attention: weights written in the cells", "#", heatmap.action_toggle_numbers),
                ("Attention: dense/full heatmap", "z", heatmap.action_toggle_density)]
