"""The Attention view's pickers: grid kind, layer and head, as selects (the view's k, l, h cycle them).

A widget of its own: the view offers it each capture (`offer`), which sets the choices, and reads the pick
with `choice()`. Any change of pick posts `AttentionPickers.Changed`; the view redraws on it. A select's open
menu leaves the letters to the view's keys (no type-to-search): e, r, a, d and j, named on the hint line and the
Run button, did nothing while it was open (issue 36's crawler, a dead `e`). The view's k, l and h leave the
footer while a menu is open (widgets/menus.py): it names Esc there, and at 80 columns q quit had no room.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Select

from tui_lab.app.guard import guarded
from tui_lab.app.views.attention.grids import ATTENTION_KINDS, KIND_TITLES, MASKS, Capture

SELECTS = {"kind": "#att-kind", "layer": "#att-layer", "head": "#att-head"}


class AttentionPickers(Horizontal):
    class Changed(Message):
        """The kind, layer or head picked changed (the layers and heads already follow a new kind)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cap = Capture()  # the capture offered last: which kinds, layers and heads it has
        self._choices: dict[str, list] = {}  # each select's values in order, for cycling
        self._held: tuple[str | None, tuple[int, int] | None] = (None, None)  # `hold`

    def compose(self) -> ComposeResult:
        yield Select([], id="att-kind", prompt="grid", allow_blank=True, compact=True, type_to_search=False)
        # Disabled until a capture offers layers (`_fill_layers`), as they are then: disabling a select as the view
        # mounts restyled it and all its parts (~0.1 s of CPU for the two, on the path of the key that opened it).
        for which in ("layer", "head"):
            yield Select([], id=f"att-{which}", prompt=which, allow_blank=True, compact=True, disabled=True,
                         type_to_search=False)

    def on_mount(self) -> None:
        for select in self.query(Select):
            self.watch(select, "expanded", lambda _: self.refresh_bindings(), init=False)

    def kinds(self) -> list[str]:
        present = sorted({kind for kind, _ in self.cap.grids}, key=list(KIND_TITLES).index)
        extra = ["pos-learned"] if self.cap.learned is not None else []
        return present + list(MASKS) + extra

    def choice(self) -> tuple[str, int, int]:
        """(kind, layer, head) as picked; head -1 is the mean of the heads."""
        kind = self.query_one("#att-kind", Select).value
        layer, head = self.query_one("#att-layer", Select).value, self.query_one("#att-head", Select).value
        return str(kind), layer if isinstance(layer, int) else -1, head if isinstance(head, int) else -1

    def choose(self, layer: int, head: int) -> bool:
        """Pick (layer, head) of the kind shown; False, the pick unchanged, when the capture has no such head."""
        if layer not in self._choices.get("#att-layer", []) or head not in self._choices.get("#att-head", []):
            return False
        self.query_one("#att-layer", Select).value = layer
        self.query_one("#att-head", Select).value = head
        return True

    def offer(self, cap: Capture) -> None:
        """A new capture (or none yet): its kinds, layers and heads; the pick stays where it still exists."""
        self.cap = cap
        kind = self.query_one("#att-kind", Select)
        current = kind.value
        options = self.kinds()
        kind.set_options([(KIND_TITLES[k], k) for k in options])
        self._choices["#att-kind"] = options
        kind.value = current if current in options else options[0]
        self._fill_layers()

    def hold(self, kind: str | None, head: tuple[int, int] | None = None) -> None:
        """A pick for the capture on its way (the tour's kind; a head chosen in a pane before the live model's
        grids arrived): `follow_capture` makes it."""
        self._held = (kind, head)

    def open_head(self, kind: str, layer: int, head: int) -> bool:
        """Pick the grid of one head; False when the capture has no such head (its kind, where it has it, is picked)."""
        self.select_kind(kind)
        return self.choose(layer, head)

    def follow_capture(self, cap: Capture, first: bool, translating: bool, learned: tuple[int, int] | None) -> None:
        """A capture arrived: `offer` it. The first opens on the cross-attention of a translation (target x
        source) or on the first kind, at the `learned` head a shipped toy's meta.json names; a pick held for it
        (`hold`) wins."""
        asked, head = self._held
        self._held = (None, None)
        head = head or (learned if first and not asked else None)
        self.offer(cap)
        if first and not asked:
            self.select_kind("cross" if translating else self.kinds()[0])
        if asked:
            self.select_kind(asked)
        if head is not None:
            self.choose(*head)

    def _fill_layers(self) -> None:
        kind = self.query_one("#att-kind", Select).value
        layers = sorted(layer for k, layer in self.cap.grids if k == kind)
        layer_sel, head_sel = self.query_one("#att-layer", Select), self.query_one("#att-head", Select)
        old_layer, old_head = layer_sel.value, head_sel.value
        layer_sel.set_options([(f"layer {i}", i) for i in layers])
        self._choices["#att-layer"] = layers
        if layers:
            layer_sel.value = old_layer if old_layer in layers else layers[0]
        heads = len(self.cap.grids[(kind, layers[0])]) if layers else 0
        head_opts = [("mean of heads", -1)] + [(f"head {h}", h) for h in range(heads)]
        head_sel.set_options(head_opts if heads else [])
        self._choices["#att-head"] = [v for _, v in head_opts] if heads else []
        if heads:
            head_sel.value = old_head if old_head in [v for _, v in head_opts] else -1
        layer_sel.disabled = head_sel.disabled = not layers

    def select_kind(self, kind: str) -> None:
        if kind in self.kinds():
            self.query_one("#att-kind", Select).value = kind
            self._fill_layers()

    def can_cycle(self, which: str, attention_only: bool = False) -> bool:
        """Whether cycling `which` changes the pick: a mask has no layer or head, one layer no other; with
        `attention_only` (the model view, which draws no mask) a model with one attention kind has no other."""
        return len(self._values(which, attention_only)) > 1

    def cycle(self, which: str, attention_only: bool = False) -> None:
        """The next value of the kind, layer or head select (after the last, the first); `can_cycle`'s
        `attention_only` skips the masks and tables."""
        select = self.query_one(SELECTS[which], Select)
        values = self._values(which, attention_only)
        if values:
            i = values.index(select.value) if select.value in values else -1
            select.value = values[(i + 1) % len(values)]

    def _values(self, which: str, attention_only: bool) -> list:
        values = self._choices.get(SELECTS[which], [])
        return [v for v in values if v in ATTENTION_KINDS] if attention_only and which == "kind" else values

    @guarded
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "att-kind":
            self._fill_layers()
        self.post_message(self.Changed())
