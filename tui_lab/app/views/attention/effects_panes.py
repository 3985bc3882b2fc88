"""The Attention view's panes about heads, one widget (`HeadPanes`): what each head does (`a` ablation, `d` logit
attribution), which known job it does (`j` head detectors) and what one head computes (`c` inside one head); and
which of the grids, the gallery (`m`, every layer x head at once) and these panes has the room.

The head effects and detectors take the grids' place and give it back on Escape; the inside-head pane sits under the
grid (in its place where the view is short), and goes with the grids while a head pane has their place: it explains
a cell of the grid put away, and at 80x24 it pushed the head pane's summary line off the pane. The widget holds what
that needs: which grids to show again, which pane measures what on the typed sentence, and which grid cell the
inside-head pane follows. The view keeps the keys (its bindings act while the grid has the focus, outside this
widget) and hands each over in a line; Enter on a head in a pane comes back as `HeadPanes.Chosen`, the grid the view
then picks.

The widget stands between the grid and the gallery, as its panes did: `height: auto` while only the inside-head pane
shows under the grid, `1fr` (class `-covering`) while a pane has the grids' room, since a `1fr` pane in an `auto`
box would take the whole view's height rather than what is left.
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import ComposeResult
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from tui_lab.app.views.attention.draw import AttentionMap
from tui_lab.app.views.attention.grids import ATTENTION_KINDS
from tui_lab.app.views.attention.head_detectors import HeadDetectors, applies
from tui_lab.app.views.attention.head_effects import HeadEffects, HeadMap, effects_refused, row_kind
from tui_lab.app.views.attention.inside_head import InsideHead, Pointer
from tui_lab.app.views.attention.patch_image import PatchImage
from tui_lab.app.views.attention.small_multiples import SmallMultiples
from tui_lab.app.widgets.mechanism_panel import MechanismPanel

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
    def refuse(self, text: str) -> None: ...
    def hint(self) -> str: ...


class HeadPanes(Widget):
    """The head panes of one Attention view: `gallery`, `ablate`, `attribute`, `detect` and `inside` are its
    keys' work; `host` is the view, for its grids, its inputs and its status line."""

    DEFAULT_CSS = """
    HeadPanes { height: auto; }
    HeadPanes.-covering { height: 1fr; }
    """
    # Where the view is short (80x24) the inside-head pane takes the grid's place and its arrows move the grid's
    # cursor.
    SHORT = 30

    class Chosen(Message):
        """Enter on a head in a pane: the pane went away, and the view picks this grid."""

        def __init__(self, kind: str, layer: int, head: int) -> None:
            super().__init__()
            self.kind, self.layer, self.head = kind, layer, head

    def __init__(self, host: PaneHost, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view = host
        self.grids_shown = {"#att-map": True}  # which grids to show again when a pane goes away
        self.inside_parked = False  # the inside-head pane was open when a pane took the grids' place
        self.table_hint = False  # the info line holds the hint said over the detectors' table (no # or z)

    def compose(self) -> ComposeResult:
        inside = InsideHead(id="att-inside")
        inside.display = False  # until c
        yield inside
        yield HeadEffects(id="att-heads")
        yield HeadDetectors(id="att-detectors")

    def live_model_changed(self) -> None:
        """A run asked for before the model came starts now; a detectors table of another model is measured
        again, or put away where the detectors do not cover the new one."""
        self.query_one(HeadEffects).live_model_changed()
        detectors = self.query_one(HeadDetectors)
        if detectors.has_class("-shown") and applies(self.view.app.live.config) is None:
            detectors.run()
        elif detectors.has_class("-shown"):
            detectors.hide()

    # -- the panes in the grids' place (a, d, j) -----------------------------------------------------------
    def shown(self) -> bool:
        return any(self.query_one(p).has_class("-shown") for p in (HeadEffects, HeadDetectors))

    def put_grids_away(self) -> None:
        """Hide the grids and the inside-head pane for a pane, remembering which were shown for Escape to bring
        back (a redraw under the pane hides them again and remembers nothing new)."""
        inside = self.query_one(InsideHead)
        if not self.has_class("-covering"):
            self.grids_shown = {s: self.view.query_one(s).display for s in GRIDS}
            self.inside_parked = inside.display
        for selector in GRIDS:
            self.view.query_one(selector).display = False
        self.add_class("-covering")
        if inside.display:
            inside.display = False
            self.view.say(self.view.hint())  # the grid's keys, not the inside-head pane's arrows

    def uncover(self) -> None:
        """The grids (and the inside-head pane) back where a pane had their place."""
        self.remove_class("-covering")
        for selector, shown in self.grids_shown.items():
            self.view.query_one(selector).display = shown
        if self.inside_parked:
            self.inside_parked = False
            self.query_one(InsideHead).display = True
            self.make_room()
            self.point_inside()
            self.view.say(self.view.hint())
        elif self.table_hint:  # the grid's keys again; a word said since (Enter's head) stays
            self.view.say(self.view.hint())
        self.table_hint = False

    def put_panes_away(self) -> None:
        """Another part takes the room (c, m): a head pane there goes, with no word to the view."""
        if self.has_class("-covering"):
            for pane in (HeadEffects, HeadDetectors):
                self.query_one(pane).put_away()
            self.uncover()

    def ablate(self) -> None:
        self._effects("ablation")

    def attribute(self) -> None:
        self._effects("attribution")

    def _effects(self, kind: str) -> None:
        view = self.view
        refused = effects_refused(kind, view.app.live.config)
        if refused is not None:  # said whole, and no earlier pane's grid left under it (issue 36 item 11)
            if self.has_class("-covering"):
                self.put_panes_away()
                view.home().focus()
            view.refuse(refused)
            return
        # read first: an empty sentence is refused (a notification) before anything moves; it hid the grids and
        # showed no pane, with the focus nowhere and the view's keys dead (the crawler's random walk)
        src_ids, src, tgt_ids, tgt, _ = view.inputs.ids()
        pane = self.query_one(HeadEffects)
        if not self.shown():
            self.put_grids_away()
        self.query_one(HeadDetectors).put_away()
        if view.encoder_decoder:  # the decoder's stream on the target (none typed: the model's own translation)
            pane.measure(kind, tgt_ids, tgt, src=src_ids)
        else:
            pane.measure(kind, src_ids, src)
        if self.table_hint:  # its grid takes # and z (the detectors' table before it did not)
            view.say(view.hint())
            self.table_hint = False

    def detect(self) -> None:
        """Every head's previous-token, duplicate-token and induction score, in the grids' place."""
        refused = applies(self.view.app.live.config)
        if refused is not None:  # from the palette: j is then the refusal's key
            self.view.refuse(refused)
            return
        if not self.shown():
            self.put_grids_away()
        self.query_one(HeadEffects).put_away()
        detectors = self.query_one(HeadDetectors)
        if not detectors.answered("j"):  # this model's scores drawn: shown again, and said so
            detectors.run()
        self.view.say(self.view.hint())  # the table takes no # or z
        self.table_hint = True

    def on_mechanism_panel_hidden(self, message: MechanismPanel.Hidden) -> None:
        """A pane went away (Escape): the grids it covered come back."""
        message.stop()
        self.uncover()
        self.view.home().focus()  # at 80x24 the inside-head pane back in the grid's place has the arrows

    def on_head_map_open(self, message: HeadMap.Open) -> None:
        """Enter on a head of the effects grid: the pane goes, and the view picks that head's grid."""
        message.stop()
        self.grids_shown = dict(BACK_TO_ONE_GRID)  # what hiding restores
        self.query_one(HeadEffects).hide()
        kind, layer = row_kind(message.row_label)
        self.post_message(self.Chosen(kind, layer, message.col))

    def on_head_detectors_open(self, message: HeadDetectors.Open) -> None:
        """Enter on a head of the detectors table: the pane goes, and the view picks that head's grid."""
        message.stop()
        self.grids_shown = dict(BACK_TO_ONE_GRID)
        self.table_hint = False  # the view says what Enter did (its hint, or that the head waits for its grid)
        self.query_one(HeadDetectors).hide()
        self.post_message(self.Chosen("decoder-self", message.layer, message.head))

    # -- every layer x head at once (m) ---------------------------------------------------------------------
    def gallery(self) -> None:
        """The model view in the grid's place, or the grid back in its."""
        view = self.view
        gallery, heatmap = view.query_one(SmallMultiples), view.query_one(AttentionMap)
        if view.choice()[0] not in ATTENTION_KINDS:
            view.refuse("the model view shows the attention kinds: press k for one")
            return
        covered = self.has_class("-covering")
        self.put_panes_away()  # under a head pane the gallery had no room: m toggled it there unseen
        gallery.display = covered or not gallery.display
        if gallery.display:  # it takes the inside-head pane's place too: that pane explains a cell of the grid
            self.query_one(InsideHead).display = False
        self.make_room()
        (gallery if gallery.display else heatmap).focus()
        view.say(view.hint())

    def gallery_chosen(self) -> None:
        """A head picked in the model view (the pickers have it): its grid full size."""
        self.view.query_one(SmallMultiples).display = False
        self.view.query_one(AttentionMap).display = True
        self.view.query_one(AttentionMap).focus()
        self.view.say(self.view.hint())
        self.view.refresh_bindings()  # k goes round every kind again

    # -- inside one head (c) --------------------------------------------------------------------------------
    def inside(self) -> None:
        view = self.view
        pane, heatmap = self.query_one(InsideHead), view.query_one(AttentionMap)
        covered = self.has_class("-covering")
        self.put_panes_away()
        pane.display = covered or not pane.display  # c over a head pane opens this one in its place
        view.query_one(SmallMultiples).display = False
        self.make_room()
        self.point_inside()
        if pane.display:
            pane.opened()
        (heatmap if heatmap.display else pane).focus()
        view.say(view.hint())

    def make_room(self) -> None:
        """The grid shows unless the gallery stands in its place, or a short view shows the open inside-head pane
        there (and in a ViT image's). A redraw under the gallery brought the grid back beside it (`m l`), and `m`
        over the inside-head pane of a short view drew the gallery, then the grid, with no row inside its box."""
        crowded = self.query_one(InsideHead).display and self.view.size.height < self.SHORT
        self.view.query_one(AttentionMap).display = not crowded and not self.view.query_one(SmallMultiples).display
        if crowded:
            self.view.query_one(PatchImage).display = False
        self.view.refresh_bindings()  # k goes round the attention kinds only while the gallery shows

    def point_inside(self) -> None:
        """The inside-head pane follows the grid's cursor and the picked kind, layer and head."""
        heatmap, (kind, layer, head) = self.view.query_one(AttentionMap), self.view.choice()
        row, col = heatmap.cursor
        self.query_one(InsideHead).point(Pointer(kind, layer, head, row, col, heatmap.row_labels,
                                                 heatmap.col_labels))

    def in_place(self) -> Widget | None:
        """The widget in the grids' place when it is not a grid: a head pane's grid or table, or the inside-head
        pane a short view shows there."""
        for pane in (self.query_one(HeadEffects), self.query_one(HeadDetectors)):
            if pane.has_class("-shown"):
                return pane.grid
        grids = (self.view.query_one(s) for s in GRIDS)
        return self.query_one(InsideHead) if self.inside_open and not any(g.display for g in grids) else None

    @property
    def table_shown(self) -> bool:
        """The head detectors' table has the grids' place (the hint line leaves the grid's # and z out)."""
        return self.query_one(HeadDetectors).has_class("-shown")

    @property
    def inside_open(self) -> bool:
        return self.query_one(InsideHead).display

    def follow(self, model: Any, src: Any, tgt: Any) -> None:
        """The inputs a capture read: the inside-head pane traces the same pass."""
        self.query_one(InsideHead).follow(model, src, tgt)

    def on_inside_head_move(self, message: InsideHead.Move) -> None:
        """The pane's arrows (where it stands in the grid's place) move the grid's cursor."""
        message.stop()
        self.view.query_one(AttentionMap).action_move(message.d_row, message.d_col)

    def after_redraw(self) -> None:
        """A new grid drawn: room for the inside-head pane, the grids away again under an open pane (they are
        what Escape brings back), and the inside-head pane on the new cell."""
        self.make_room()
        if self.shown():
            self.put_grids_away()
        self.point_inside()
