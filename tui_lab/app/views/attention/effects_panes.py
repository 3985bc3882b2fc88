"""The Attention view's panes about heads: every layer x head at once (`m`), what each head does (`a` ablation,
`d` logit attribution), which known job it does (`j` head detectors), and what one head computes (`c` inside one
head).

The model view takes the grid's place and gives it back on `m` or Enter; the head effects and detectors take
the grids' place and give it back on Escape; the inside-head pane sits under the grid (in its place where the
view is short). `HeadPanes` holds what that needs: which grids to show again, which pane
measures what on the typed sentence, and which grid cell the inside-head pane follows. The view owns it, keeps
the keys (Textual finds bindings and message handlers on the view) and hands each one over in a line.

The panes stay children of the view, in their places between the grids: a container around them would lay
them out differently (a `height: auto` box gives a `1fr` grid the whole view's height, not what is left).
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.geometry import Size
from textual.widget import Widget

from tui_lab.app.views.attention.draw import AttentionMap
from tui_lab.app.views.attention.grids import ATTENTION_KINDS
from tui_lab.app.views.attention.head_detectors import HeadDetectors, applies
from tui_lab.app.views.attention.head_effects import HeadEffects, effects_refused, row_kind
from tui_lab.app.views.attention.inside_head import InsideHead, Pointer
from tui_lab.app.views.attention.patch_image import PatchImage
from tui_lab.app.views.attention.small_multiples import SmallMultiples

GRIDS = ("#att-map", "#att-model", "#att-image")  # what the head panes take the place of
BACK_TO_ONE_GRID = {"#att-map": True, "#att-model": False, "#att-image": False}  # after Enter opens a head


class PaneHost(Protocol):
    """What the panes ask of the view that holds them (the Attention view)."""

    app: Any
    size: Size
    encoder_decoder: bool

    @property
    def inputs(self) -> Any: ...
    def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...
    def choice(self) -> tuple[str, int, int]: ...
    def home(self) -> Widget: ...
    def say(self, text: str) -> None: ...
    def hint(self) -> str: ...


class HeadPanes:
    """The head panes of one Attention view: `gallery`, `ablate`, `attribute`, `detect` and `inside` are its
    keys' work."""

    # Where the view is short (80x24) the inside-head pane takes the grid's place and its arrows move the grid's
    # cursor.
    SHORT = 30

    def __init__(self, view: PaneHost) -> None:
        self.view = view
        self.grids_shown = {"#att-map": True}  # which grids to show again when a pane goes away

    def live_model_changed(self) -> None:
        """A run asked for before the model came starts now; a detectors table of another model is measured
        again, or put away where the detectors do not cover the new one."""
        self.view.query_one(HeadEffects).live_model_changed()
        detectors = self.view.query_one(HeadDetectors)
        if detectors.has_class("-shown") and applies(self.view.app.live.config) is None:
            detectors.run()
        elif detectors.has_class("-shown"):
            detectors.hide()

    # -- the panes in the grids' place (a, d, j) -----------------------------------------------------------
    def shown(self) -> bool:
        return any(self.view.query_one(p).has_class("-shown") for p in (HeadEffects, HeadDetectors))

    def put_grids_away(self) -> None:
        """Hide the grids for a pane, remembering which were shown for Escape to bring back."""
        self.grids_shown = {s: self.view.query_one(s).display for s in GRIDS}
        for selector in GRIDS:
            self.view.query_one(selector).display = False

    def ablate(self) -> None:
        self._effects("ablation")

    def attribute(self) -> None:
        self._effects("attribution")

    def _effects(self, kind: str) -> None:
        view = self.view
        refused = effects_refused(kind, view.app.live.config)
        if refused is not None:  # said whole, and no earlier pane's grid left under it (issue 36 item 11)
            for shown in (p for p in (HeadEffects, HeadDetectors) if view.query_one(p).has_class("-shown")):
                view.query_one(shown).hide()
            view.say(refused)
            return
        pane = view.query_one(HeadEffects)
        if not self.shown():
            self.put_grids_away()
        view.query_one(HeadDetectors).put_away()
        src_ids, src, tgt_ids, tgt, _ = view.inputs.ids()
        if view.encoder_decoder:  # the decoder's stream on the target (none typed: the model's own translation)
            pane.measure(kind, tgt_ids, tgt, src=src_ids)
        else:
            pane.measure(kind, src_ids, src)

    def detect(self) -> None:
        """Every head's previous-token, duplicate-token and induction score, in the grids' place."""
        refused = applies(self.view.app.live.config)
        if refused is not None:  # from the palette: j is then the refusal's key
            self.view.say(refused)
            return
        if not self.shown():
            self.put_grids_away()
        self.view.query_one(HeadEffects).put_away()
        self.view.query_one(HeadDetectors).run()

    def hidden(self) -> None:
        """A pane went away (Escape): the grids it covered come back."""
        for selector, shown in self.grids_shown.items():
            self.view.query_one(selector).display = shown
        self.view.home().focus()

    def open_effect(self, row_label: str, col: int) -> tuple[str, int, int]:
        """Enter on a head of the effects grid: the pane goes, and (kind, layer, head) is the grid to pick."""
        self.grids_shown = dict(BACK_TO_ONE_GRID)  # what hiding restores
        self.view.query_one(HeadEffects).hide()
        kind, layer = row_kind(row_label)
        return kind, layer, col

    def open_detected(self, layer: int, head: int) -> tuple[str, int, int]:
        """Enter on a head of the detectors table: the pane goes, and (kind, layer, head) is the grid to pick."""
        self.grids_shown = dict(BACK_TO_ONE_GRID)
        self.view.query_one(HeadDetectors).hide()
        return "decoder-self", layer, head

    # -- every layer x head at once (m) ---------------------------------------------------------------------
    def gallery(self) -> None:
        """The model view in the grid's place, or the grid back in its."""
        view = self.view
        gallery, heatmap = view.query_one(SmallMultiples), view.query_one(AttentionMap)
        if view.choice()[0] not in ATTENTION_KINDS:
            view.say("the model view shows the attention kinds: press k for one")
            return
        gallery.display, heatmap.display = not gallery.display, gallery.display
        (gallery if gallery.display else heatmap).focus()
        view.say(view.hint())

    def gallery_chosen(self) -> None:
        """A head picked in the model view (the pickers have it): its grid full size."""
        self.view.query_one(SmallMultiples).display = False
        self.view.query_one(AttentionMap).display = True
        self.view.query_one(AttentionMap).focus()
        self.view.say(self.view.hint())

    # -- inside one head (c) --------------------------------------------------------------------------------
    def inside(self) -> None:
        view = self.view
        pane, heatmap = view.query_one(InsideHead), view.query_one(AttentionMap)
        pane.display = not pane.display
        view.query_one(SmallMultiples).display = False
        self.make_room()
        self.point_inside()
        if pane.display:
            pane.opened()
        (heatmap if heatmap.display else pane).focus()
        view.say(view.hint())

    def make_room(self) -> None:
        """A short view shows the open inside-head pane in the grid's (and a ViT image's) place."""
        crowded = self.view.query_one(InsideHead).display and self.view.size.height < self.SHORT
        self.view.query_one(AttentionMap).display = not crowded
        if crowded:
            self.view.query_one(PatchImage).display = False

    def point_inside(self) -> None:
        """The inside-head pane follows the grid's cursor and the picked kind, layer and head."""
        heatmap, (kind, layer, head) = self.view.query_one(AttentionMap), self.view.choice()
        row, col = heatmap.cursor
        self.view.query_one(InsideHead).point(Pointer(kind, layer, head, row, col, heatmap.row_labels,
                                                      heatmap.col_labels))

    def after_redraw(self) -> None:
        """A new grid drawn: room for the inside-head pane, the grids away again under an open pane (they are
        what Escape brings back), and the inside-head pane on the new cell."""
        self.make_room()
        if self.shown():
            self.put_grids_away()
        self.point_inside()
