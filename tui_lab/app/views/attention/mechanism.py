"""The Attention view's head effects (a mixin of AttentionView): `a` ablation and `d` direct logit attribution
of every head on the typed sentence, in the grids' place (`head_effects`); Enter opens a head's attention,
Escape gives the grids back as they were."""

from __future__ import annotations

from tui_lab.app.guard import guarded
from tui_lab.app.views.attention.head_effects import HeadEffects, HeadMap
from tui_lab.app.widgets.mechanism_panel import MechanismPanel

GRIDS = ("#att-map", "#att-model", "#att-image")


def row_kind(label: str) -> tuple[str, int]:
    """A row of the head grid as (attention kind, layer): `L3`, `enc L0`, `dec L1 self`, `dec L1 cross`."""
    words = label.split()
    layer = int(next(w for w in words if w.startswith("L"))[1:])
    if words[0] == "enc":
        return "encoder-self", layer
    return ("cross" if words[-1] == "cross" else "decoder-self"), layer


class AttentionMechanism:
    def compose_mechanism(self):
        yield HeadEffects(id="att-heads")

    def _show_effects(self, kind: str) -> None:
        panel = self.query_one(HeadEffects)
        if not panel.has_class("-shown"):
            self._grids_shown = {s: self.query_one(s).display for s in GRIDS}
            for selector in GRIDS:
                self.query_one(selector).display = False
        src_ids, src, tgt_ids, tgt, _ = self._ids()
        if self.encoder_decoder:  # the decoder's stream on the target (none typed: the model's own translation)
            panel.measure(kind, tgt_ids, tgt, src=src_ids)
        else:
            panel.measure(kind, src_ids, src)

    @guarded
    def action_ablate(self) -> None:
        self._show_effects("ablation")

    @guarded
    def action_attribute(self) -> None:
        self._show_effects("attribution")

    def on_mechanism_panel_hidden(self) -> None:
        for selector, shown in getattr(self, "_grids_shown", {"#att-map": True}).items():
            self.query_one(selector).display = shown
        self.home().focus()

    def on_head_map_open(self, message: HeadMap.Open) -> None:
        self._grids_shown = {"#att-map": True, "#att-model": False, "#att-image": False}  # what hiding restores
        self.query_one(HeadEffects).hide()
        kind, layer = row_kind(message.row_label)
        self._select_kind(kind)
        self.choose(layer, message.col)

    def stop_mechanism(self) -> None:
        for panel in self.query(MechanismPanel):
            panel.cancel()
