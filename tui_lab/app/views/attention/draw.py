"""The Attention view's drawing: the grid the pickers point at, its title, a ViT's image, every head at once.

A mixin of AttentionView (which provides `cap`, `image`, `_title`, `last_export`, `choice()`, `choose()` and
`_info()`). Which grid, its labels and its mask come from `grids` (pure); this draws them, and
writes the shown grid to JSON on `e`.
"""

from __future__ import annotations

import json
import time

from textual.events import Resize
from textual.widgets import Input, Label

from tui_lab.app.guard import guarded
from tui_lab.app.origin import describe_origin
from tui_lab.app.views.attention import vit
from tui_lab.app.views.attention.grids import ATTENTION_KINDS, Pattern, fit_title, grid_spec, hatched_cells
from tui_lab.app.views.attention.patch_image import PatchImage
from tui_lab.app.views.attention.small_multiples import SmallMultiples
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.paths import exports_dir


class AttentionDrawing:
    def current_grid(self) -> tuple[str, list[list[float]], list[str], list[str]]:
        """(title, values, row labels, column labels) of what the pickers point at."""
        spec = self.current_spec()
        return spec.title, spec.values, spec.rows, spec.cols

    def current_spec(self):
        kind, layer, head = self.choice()
        config = self.app.live.config
        return grid_spec(self.cap, kind, layer, head, self.query_one("#att-src", Input).value, config.d_model,
                         self.pattern, causal=config.family != "encoder-only", cross_kind=config.cross_attention)

    @property
    def pattern(self) -> Pattern:
        config = self.app.live.config
        return Pattern(config.attention_window, config.global_tokens)

    def redraw(self) -> None:
        spec = self.current_spec()
        heatmap = self.query_one(Heatmap)
        heatmap.set_grid(spec.values, spec.rows, spec.cols, lo=spec.lo, hi=spec.hi, mask=spec.mask, axes=spec.axes,
                         row_notes=spec.row_notes)
        self._title = (self._weights_note() + spec.title, self.choice()[0])
        self._draw_title()
        self._draw_image()
        self._draw_model_view()

    def _draw_title(self) -> None:
        """The title line fitted to the view's width: whose weights and the kind first, then the numbers."""
        text, kind = self._title
        self.query_one("#att-title", Label).update(fit_title(text, kind, self.content_size.width))

    def on_resize(self, event: Resize) -> None:
        self._draw_title()  # the fit depends on the width

    def _weights_note(self) -> str:
        """Whose weights drew the grid (masks and positions need none), first: a narrow title cuts its end.
        The header has the detail (which preset, run, folder)."""
        if self.choice()[0] not in ATTENTION_KINDS:
            return ""
        return f"{describe_origin(self.app.live.origin).lead} · "

    def _draw_model_view(self) -> None:
        kind = self.choice()[0]
        layers = sorted(layer for k, layer in self.cap.grids if k == kind)
        tiles = [list(zip(self.cap.grids[(kind, layer)], self.cap.entropy.get((kind, layer), []), strict=False))
                 for layer in layers]
        first = self.cap.grids[(kind, layers[0])][0] if layers else None
        local = kind == "encoder-self" and self.pattern.window > 0
        mask = hatched_cells(len(first), len(first[0]), self.pattern, kind == "decoder-self") \
            if first and (kind == "decoder-self" or local) else None
        self.query_one(SmallMultiples).set_tiles(tiles, layers, mask)

    def action_model_view(self) -> None:
        """Every layer x head of the chosen kind at once; pick one to open it full size."""
        gallery, heatmap = self.query_one(SmallMultiples), self.query_one(Heatmap)
        if self.choice()[0] not in ATTENTION_KINDS:
            self._info("the model view shows the attention kinds: press k for one")
            return
        gallery.display, heatmap.display = not gallery.display, gallery.display
        (gallery if gallery.display else heatmap).focus()
        self._info(self._hint())

    def on_small_multiples_chosen(self, message: SmallMultiples.Chosen) -> None:
        self.choose(message.layer, message.head)
        self.query_one(SmallMultiples).display = False
        self.query_one(Heatmap).display = True
        self.query_one(Heatmap).focus()
        self._info(self._hint())

    def point_at(self, query: str, key: str) -> None:
        """Move the heatmap cursor to the first cell whose row/column labels are `query`/`key`."""
        heatmap = self.query_one(Heatmap)
        if query in heatmap.row_labels and key in heatmap.col_labels:
            heatmap.move_cursor(heatmap.row_labels.index(query), heatmap.col_labels.index(key))

    def _draw_image(self) -> None:
        """The image with the class token's attention (this layer and head) over its patch grid."""
        widget, (kind, layer, head) = self.query_one(PatchImage), self.choice()
        widget.display = self.image is not None
        weights = self.cap.grids.get((kind, layer)) if self.image is not None else None
        if not weights:
            return
        config = self.app.live.config
        table = vit.class_token_row(weights, head, config.image_size // config.patch_size)
        which = f"head {head}" if head >= 0 else "mean of heads"
        widget.show(self.image[0], table, f"{self.image[1]} · [CLS] attention, layer {layer}, {which}")

    @guarded
    def action_export(self) -> None:
        spec = self.current_spec()
        if not spec.values:
            raise ValueError("nothing to export yet: run a capture first")
        kind = self.choice()[0]
        path = exports_dir() / f"tui-lab-{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        clean = [[v if v == v else None for v in row] for row in spec.values]  # NaN -> null
        path.write_text(json.dumps({"title": spec.title, "kind": kind, "rows": spec.rows, "cols": spec.cols,
                                    "values": clean, "mask": spec.mask}))
        self.app.notify(f"grid written to {path}", title="export")
        self.last_export = path
