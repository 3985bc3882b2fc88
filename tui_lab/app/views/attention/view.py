"""Attention: type a sentence (and a target), see every grid the live model computes, and the masks.

Without a tokenizer (a random preset) words are split on spaces and hashed to ids (`grids.hash_ids`):
the weights are random, so the grids show what an UNTRAINED model does. A loaded model whose tokenizer
lacks the typed words gets text from its own data instead (`capture.model_inputs`). The
capture runs in a thread worker; grids arrive as a message. `m` shows every layer x head at once.

The view holds the capture and lays out its parts; each part is a widget beside this file that owns its
piece of the screen, is told what to show by a method call, and says what happened with a message:
`AttentionInputs` (`inputs`: the sentence, posts RunAsked), `AttentionPickers` (`pickers`: kind, layer and
head, posts Changed), `GridTitle` and `AttentionMap` (`draw`), `SmallMultiples` (posts Chosen), `PatchImage`,
and `HeadPanes` (`effects_panes`: ablation, attribution, head detectors and inside one head, and which of them,
the grid or the gallery has the room; posts Chosen). `CaptureRuns` (`capture_runs`) starts the captures and
answers r on grids already drawn. The view keeps the keys and hands each over in a line; the hint line under the
grid, and which keys apply, are `hints`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.events import Resize
from textual.widget import Widget

from tui_lab.app.grids import GridSpec
from tui_lab.app.guard import guarded
from tui_lab.app.view_contract import LabView, Opening
from tui_lab.app.views.attention import capture as work
from tui_lab.app.views.attention import draw, hints
from tui_lab.app.views.attention.capture_runs import CaptureRuns
from tui_lab.app.views.attention.draw import AttentionMap, GridTitle
from tui_lab.app.views.attention.effects_panes import HeadPanes
from tui_lab.app.views.attention.grids import ATTENTION_KINDS, MASKS, Capture, Pattern, grid_spec, has_attention
from tui_lab.app.views.attention.head_detectors import applies
from tui_lab.app.views.attention.inputs import AttentionInputs, learned_head
from tui_lab.app.views.attention.patch_image import PatchImage
from tui_lab.app.views.attention.pickers import AttentionPickers
from tui_lab.app.views.attention.small_multiples import SmallMultiples
from tui_lab.app.widgets.drawn_inputs import refuse
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.menus import menu_open


class AttentionView(LabView):
    BINDINGS = hints.KEYS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cap = Capture()
        self.pending_cursor: tuple[str, str] | None = None
        self.runs = CaptureRuns(self)  # r and every capture; what r answers instead of capturing again
        self.last_export: Path | None = None
        self.panes = HeadPanes(self, id="att-panes")

    # what tests read of the capture (no view reads another)
    @property
    def grids(self) -> dict[tuple[str, int], list]:
        return self.cap.grids

    @property
    def captured_generation(self) -> int:
        return self.runs.generation

    @property
    def src(self) -> list[str]:
        return self.cap.src

    @property
    def tgt(self) -> list[str]:
        return self.cap.tgt

    def compose(self) -> ComposeResult:
        yield AttentionInputs(id="att-inputs")
        yield AttentionPickers(id="att-pickers")
        yield GridTitle(id="att-title")
        yield PatchImage(id="att-image")
        yield AttentionMap(id="att-map")
        yield self.panes  # ablation, attribution, head detectors, inside one head
        yield SmallMultiples(id="att-model")
        yield hints.InfoLine(id="att-info")

    def on_mount(self) -> None:
        self.query_one(SmallMultiples).display = False
        self.query_one(PatchImage).display = False
        self.inputs.set_defaults()
        self.pickers.offer(self.cap)
        self.live_model_changed()

    def home(self) -> Widget:
        """What is on screen in the grid's place: its arrows, #, z and the view's k, l, h, m act as soon as the
        view opens. A head pane there has it (coming back to the view focused the grid under the pane: z and #
        changed what nobody saw, the crawler's random walk)."""
        gallery = self.query_one(SmallMultiples)
        return self.panes.in_place() or (gallery if gallery.display else self.query_one(AttentionMap))

    @property
    def inputs(self) -> AttentionInputs:
        return self.query_one(AttentionInputs)

    # -- the pickers ---------------------------------------------------------------------------------
    @property
    def pickers(self) -> AttentionPickers:
        return self.query_one(AttentionPickers)

    def choice(self) -> tuple[str, int, int]:
        """(kind, layer, head) as picked; head -1 is the mean of the heads."""
        return self.pickers.choice()

    def kinds(self) -> list[str]:
        """The grid kinds the last capture offers (tests read them)."""
        return self.pickers.kinds()

    def action_grid_density(self) -> None:
        grid = self.home()
        if isinstance(grid, Heatmap):
            grid.action_toggle_density()

    def action_grid_numbers(self) -> None:
        grid = self.home()
        if isinstance(grid, Heatmap):
            grid.action_toggle_numbers()

    def action_cycle(self, which: str) -> None:
        self.pickers.cycle(which, attention_only=self.gallery_shown)  # the model view draws no mask

    @property
    def gallery_shown(self) -> bool:
        galleries = self.query(SmallMultiples)  # none while the view still composes
        return bool(galleries) and galleries.first().display

    @guarded
    def on_attention_pickers_changed(self, message: AttentionPickers.Changed) -> None:
        if self.gallery_shown and self.choice()[0] not in ATTENTION_KINDS:  # a mask picked with the mouse
            self.panes.gallery_chosen()  # its grid, in the model view's place (it drew an empty box)
        self.redraw()
        self.refresh_bindings()  # l and h dim while the grid has no other layer or head (a mask has neither)

    # -- the live model ----------------------------------------------------------------------------
    @property
    def encoder_decoder(self) -> bool:
        return self.app.live.config.family == "encoder-decoder"

    def live_model_changed(self) -> None:
        """Rebuilt or loaded: redraw the inputs for the family and capture again."""
        self.inputs.follow_model()
        self.cap = Capture(encoder_decoder=self.encoder_decoder)
        self.pickers.offer(self.cap)
        self.panes.live_model_changed()
        self.refresh_bindings()  # j is on the footer for the models the head detectors cover
        if not self.app.live.ready:
            self.say(f"the live model is not ready yet ({self.app.live.status})")
        elif self.inputs.fit_to_tokenizer():
            self.say("finding text the loaded model's tokenizer covers...")
        else:
            self.capture()

    # -- running -----------------------------------------------------------------------------------
    def open_on(self, opening: Opening) -> None:
        """The Tour's g: its grid kind (and cell) on the inputs shown, when the live model has that attention."""
        config = self.app.live.config
        if opening.kind is not None and not has_attention(config.family, opening.kind):
            self.notify(f"the live model ({config.name}) has no {opening.kind} attention: the tour's grid came "
                        f"from its own shipped toy", title="tour")
        elif opening.kind is not None:
            self.set_inputs(self.inputs.source, kind=opening.kind, cursor=opening.cursor)

    def set_inputs(self, source: str, target: str | None = None, kind: str | None = None,
                   cursor: tuple[str, str] | None = None) -> None:
        """For the tour: fill the inputs, then select `kind` and put the cursor on (query, key) tokens."""
        self.inputs.set_text(source, target)
        self.pending_cursor = cursor
        self.pickers.hold(kind)
        if kind in MASKS or kind == "pos-learned":
            self.pickers.select_kind(kind)
        if self.app.live.ready:
            self.capture()

    @guarded
    def action_run(self) -> None:
        """r, the Run button or Enter in a field (`CaptureRuns.run`)."""
        self.runs.run()

    @guarded
    def capture(self) -> None:
        self.runs.start()

    def on_captured(self, message: work.Captured) -> None:
        first = not self.cap.grids
        arrival = self.runs.arriving(message)
        self.cap = Capture(message.grids, message.entropy, message.src, message.tgt, message.predicted,
                           message.learned, self.encoder_decoder, message.image)
        if message.inputs is not None:
            self.panes.follow(*message.inputs)
        learned = learned_head(self.app.live.config) if first else None  # a shipped toy opens on its meta.json's
        self.pickers.follow_capture(self.cap, first, message.translation is not None, learned)
        self.redraw()
        if self.pending_cursor:
            self.point_at(*self.pending_cursor)
            self.pending_cursor = None
        if message.guesses:  # BERT: the cursor on the [MASK] row, its guesses under the grid
            self.query_one(AttentionMap).move_cursor(message.guesses[0][0], message.guesses[0][0])
        self.say(message.note(self.hint()))
        self.runs.arrived(arrival)

    # -- drawing -------------------------------------------------------------------------------------
    @property
    def pattern(self) -> Pattern:
        config = self.app.live.config
        return Pattern(config.attention_window, config.global_tokens)

    def current_spec(self) -> GridSpec:
        """The grid the pickers point at: values, labels, mask, scale (`grids.grid_spec`)."""
        kind, layer, head = self.choice()
        config = self.app.live.config
        return grid_spec(self.cap, kind, layer, head, self.inputs.source, config.d_model, self.pattern,
                         causal=config.family != "encoder-only", cross_kind=config.cross_attention)

    def redraw(self) -> None:
        """The picked grid, its title, a ViT's image and the model view; then the inside-head panel follows."""
        spec, (kind, layer, head) = self.current_spec(), self.choice()
        self.query_one(AttentionMap).set_grid(spec.values, spec.rows, spec.cols, lo=spec.lo, hi=spec.hi,
                                              mask=spec.mask, axes=spec.axes, row_notes=spec.row_notes)
        self.query_one(GridTitle).show(draw.weights_note(kind, self.app.live.origin) + spec.title, kind)
        image = self.query_one(PatchImage)
        image.display = self.cap.image is not None
        shown = draw.class_token_image(self.cap, kind, layer, head, self.app.live.config)
        if shown is not None:
            image.show(*shown)
        gallery = self.query_one(SmallMultiples)
        gallery.set_tiles(*draw.gallery_tiles(self.cap, kind, self.pattern))
        gallery.point_at(layer, head)
        self.panes.after_redraw()

    def on_resize(self, event: Resize) -> None:
        self.refresh_bindings()  # j's place: the footer or the hint line

    def point_at(self, query: str, key: str) -> None:
        """Move the grid's cursor to the first cell whose row/column labels are `query`/`key`."""
        self.query_one(AttentionMap).point_at(query, key)

    def action_model_view(self) -> None:
        self.panes.gallery()

    def on_small_multiples_chosen(self, message: SmallMultiples.Chosen) -> None:
        self.pickers.choose(message.layer, message.head)
        self.panes.gallery_chosen()

    @guarded
    def action_export(self) -> None:
        path = draw.export_grid(self.current_spec(), self.choice()[0])
        self.app.notify(f"grid written to {path}", title="export")
        self.last_export = path

    # -- the head panes (a, d, j, c): the `effects_panes.HeadPanes` widget does their work -------------------
    @guarded
    def action_ablate(self) -> None:
        self.panes.ablate()

    @guarded
    def action_attribute(self) -> None:
        self.panes.attribute()

    @guarded
    def action_head_detectors(self) -> None:
        self.panes.detect()

    def action_head_detectors_narrow(self) -> None:
        self.action_head_detectors()

    def action_head_detectors_refused(self) -> None:
        self.refuse(applies(self.app.live.config) or "")

    def action_inside_head(self) -> None:
        self.panes.inside()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        pickers = self.query(AttentionPickers)  # none while the view still composes
        return hints.allows(action, parameters, self.app.live.config, self.app.size.width,
                            pickers.first() if pickers else None, menu_open(self.app), self.gallery_shown)

    @guarded
    def on_head_panes_chosen(self, message: HeadPanes.Chosen) -> None:
        """Enter on a head in a pane: its grid. A pane's table outlives a capture (the live model changed): the
        grid opens when the new grids arrive (it set a layer the emptied picker lacked: a traceback)."""
        kind, layer, head = message.kind, message.layer, message.head
        if self.pickers.open_head(kind, layer, head):
            self.say(self.hint())  # the grid's keys (the detectors' table took no # or z)
            return
        if self.runs.busy() or not self.cap.grids:  # captured anew, or to be once the new model is ready
            self.pickers.hold(kind, (layer, head))
            self.say(f"L{layer}H{head}: its grid opens when the grids of the live model arrive")
        else:
            self.say(f"L{layer}H{head}: the grids shown have no such {kind} head; r captures them again")

    def on_heatmap_cell_highlighted(self, message: Heatmap.CellHighlighted) -> None:
        self.panes.point_inside()

    def on_capture_failed(self, message: work.CaptureFailed) -> None:
        self.runs.failed()
        self.say(f"[red]capture failed:[/red] {message.error}")

    def on_attention_inputs_run_asked(self, message: AttentionInputs.RunAsked) -> None:
        self.action_run()

    def hint(self) -> str:
        return hints.hint(self.app.live.config, self.query_one(SmallMultiples).display,
                          self.panes.inside_open, self.size.width, self.app.size.width, self.panes.table_shown)

    def say(self, text: str) -> None:
        self.query_one(hints.InfoLine).say(text)

    def info_text(self) -> str:
        return self.query_one(hints.InfoLine).text

    def steady_rows(self) -> tuple[Widget, ...]:
        """What r's answer does not read as the view's change: the fields and the info line it is said on."""
        return self.inputs, self.query_one(hints.InfoLine)

    def grid_shown(self) -> tuple:
        grid = self.query_one(AttentionMap)
        return grid.values, grid.row_labels, grid.col_labels

    def refuse(self, text: str) -> None:
        """Why a key does not apply, on the info line, where it stays; said again it notifies too, or the press
        changed nothing on screen (`d` twice on an encoder-decoder, the long tier's walk)."""
        refuse(self, self.say, self.info_text(), text, "already shown")

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return hints.palette(self, self.query_one(AttentionMap))
