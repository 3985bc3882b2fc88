"""The Attention view's drawing: the grid's title line, the grid itself, and what the other widgets are handed.

Which grid, its labels and its mask come from `grids` (pure); the view hands them to the widgets here (the
title and the grid) and to the gallery and the ViT image with the helpers below, and writes the shown grid
to JSON on `e` (`export_grid`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from textual.widgets import Label

from tui_lab.app.grids import GridSpec
from tui_lab.app.origin import describe_origin
from tui_lab.app.views.attention import vit
from tui_lab.app.views.attention.grids import ATTENTION_KINDS, Capture, Pattern, fit_title, hatched_cells
from tui_lab.app.widgets.heatmap import QuietHeatmap
from tui_lab.served import check_room, exports_folder

Tiles = list[list[tuple[list[list[float]], float]]]  # per layer, per head: (weights, entropy)


class AttentionMap(QuietHeatmap):
    """The view's grid: its # and z are on the hint line under it, so the footer keeps the view's keys."""

    def on_mount(self) -> None:
        self.empty_note = "no grids yet: a sentence above, then r (Run) captures them"

    def point_at(self, query: str, key: str) -> None:
        """Move the cursor to the first cell whose row/column labels are `query`/`key` (when both are there)."""
        if query in self.row_labels and key in self.col_labels:
            self.move_cursor(self.row_labels.index(query), self.col_labels.index(key))


class GridTitle(Label):
    """The line above the grid: whose weights and the kind first, then the numbers, fitted to its own width
    whenever it is shown or resized. Fitted to the view's width when handed over, a redraw while the view had
    no width kept the whole title and the pane cut it with no mark (the long tier's English 80x24 walk)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.whole, self.kind = "", ""  # the whole title and its grid's kind

    def show(self, whole: str, kind: str) -> None:
        self.whole, self.kind = whole, kind
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        # its width is the row's (1fr), not the text's: a new text needs no new layout
        self.update(fit_title(self.whole, self.kind, self.content_size.width), layout=False)


def weights_note(kind: str, origin: Any) -> str:
    """Whose weights drew the grid (masks and positions need none), first: a narrow title cuts its end.
    The header has the detail (which preset, run, folder)."""
    if kind not in ATTENTION_KINDS:
        return ""
    return f"{describe_origin(origin).lead} · "


def gallery_tiles(cap: Capture, kind: str, pattern: Pattern) -> tuple[Tiles, list[int], list[list[bool]] | None]:
    """Every layer x head of `kind` for the model view: the tiles, their layers, and the cells hatched."""
    layers = sorted(layer for k, layer in cap.grids if k == kind)
    tiles = [list(zip(cap.grids[(kind, layer)], cap.entropy.get((kind, layer), []), strict=False))
             for layer in layers]
    first = cap.grids[(kind, layers[0])][0] if layers else None
    local = kind == "encoder-self" and pattern.window > 0
    mask = hatched_cells(len(first), len(first[0]), pattern, kind == "decoder-self") \
        if first and (kind == "decoder-self" or local) else None
    return tiles, layers, mask


def class_token_image(cap: Capture, kind: str, layer: int, head: int, config: Any) \
        -> tuple[list[list[float]], list[list[float]], str] | None:
    """A ViT's image with the class token's attention (this layer and head) over its patch grid, and the
    caption: what `PatchImage.show` takes; None when the capture has no image or no such grid."""
    weights = cap.grids.get((kind, layer)) if cap.image is not None else None
    if not weights:
        return None
    pixels, caption = cap.image
    table = vit.class_token_row(weights, head, config.image_size // config.patch_size)
    which = f"head {head}" if head >= 0 else "mean of heads"
    return pixels, table, f"{caption} · [CLS] attention, layer {layer}, {which}"


def export_grid(spec: GridSpec, kind: str) -> Path:
    """Write the grid shown to a JSON file in the exports folder (a served session's own, within its quota)."""
    if not spec.values:
        raise ValueError("nothing to export yet: run a capture first")
    clean = [[v if v == v else None for v in row] for row in spec.values]  # NaN -> null
    text = json.dumps({"title": spec.title, "kind": kind, "rows": spec.rows, "cols": spec.cols,
                       "values": clean, "mask": spec.mask})
    check_room(len(text.encode()), "the export")
    folder = exports_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tui-lab-{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(text)
    return path
