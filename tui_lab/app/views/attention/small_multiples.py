"""The model view (after BertViz): every layer x head of one attention kind as a small multiple.

Rows are layers, columns are heads. Each tile is a thumbnail of that head's grid in half blocks (two
matrix rows per character line, nearest-sampled to the tile), with the head's attention entropy under
it (mean over queries of -sum p ln p, in nats: low = focused, high = spread out). Arrows move between
tiles, Enter or a click opens one full size (the view receives `Chosen`).
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui_lab.app.guard import guarded
from tui_lab.app.widgets.cut import cut
from tui_lab.app.widgets.grid_cells import MARK, dense_cell, legend, level, palette
from tui_lab.app.widgets.scroll_room import ForecastScrollView, room_inside_scrollbars, show_forecast

GUTTER = 4  # "L11 ": the least; a deeper model's names take their room and a space (`names_w`)
TILE_W = (4, 16)  # characters per tile, least and most
GAP = 1


class SmallMultiples(ForecastScrollView, can_focus=True):
    """`set_tiles(tiles)` with tiles[layer][head] = (grid, entropy); masked cells hatch nowhere: blank."""

    BINDINGS = [
        Binding("up", "move(-1, 0)", "up", show=False),
        Binding("down", "move(1, 0)", "down", show=False),
        Binding("left", "move(0, -1)", "left", show=False),
        Binding("right", "move(0, 1)", "right", show=False),
        # Off the footer, which keeps q quit and the view's k, l, h at 80 columns: the hint line names ⏎.
        Binding("enter", "open", "open head", show=False),
    ]
    DEFAULT_CSS = "SmallMultiples { height: 1fr; }"

    class Chosen(Message):
        def __init__(self, layer: int, head: int) -> None:
            super().__init__()
            self.layer, self.head = layer, head

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.tiles: list[list[tuple[list[list[float]], float]]] = []
        self.layer_ids: list[int] = []
        self.mask: list[list[bool]] | None = None
        self.cursor = (0, 0)
        self._inner: tuple[tuple, Size] | None = None

    def set_tiles(self, tiles: list[list[tuple[list[list[float]], float]]], layers: list[int],
                  mask: list[list[bool]] | None = None) -> None:
        self.tiles, self.layer_ids, self.mask = tiles, layers, mask
        self.cursor = (min(self.cursor[0], max(0, len(tiles) - 1)), min(self.cursor[1], max(0, self.heads - 1)))
        self._relayout()

    @property
    def heads(self) -> int:
        return len(self.tiles[0]) if self.tiles else 0

    # -- geometry ----------------------------------------------------------------------------------
    @property
    def inner(self) -> Size:
        """The box the tiles are drawn in: the widget less the scrollbars their layout makes Textual show."""
        key = (self.size, len(self.tiles), self.heads, self.names_w)
        if self._inner is None or self._inner[0] != key:
            self._inner = (key, self._fit())
        return self._inner[1]

    def _fit(self) -> Size:
        """The tiles laid out in the room their own scrollbars leave (`scroll_room`), as the Heatmap's grid is."""
        return room_inside_scrollbars(self.size, self.styles.scrollbar_size_vertical,
                                      self.styles.scrollbar_size_horizontal, self._virtual)

    def _tile_w(self, width: int) -> int:
        room = (width - self.names_w) // max(1, self.heads) - GAP
        return max(TILE_W[0], min(TILE_W[1], room))

    def _captions(self, height: int) -> bool:
        """Captions stay unless the box cannot hold even one tile line and its caption."""
        return not height or height - 2 >= 2

    def _readable(self, width: int) -> int:
        """Lines a tile needs for every matrix row its own half line (at most half the tile's width)."""
        rows = len(self.tiles[0][0][0]) if self.tiles and self.tiles[0] and self.tiles[0][0][0] else 1
        return max(1, min(self._tile_w(width) // 2, -(-rows // 2)))

    def _tile_h(self, width: int, height: int) -> int:
        """As many lines as the layers' share of the box gives, and never fewer than make the grid readable
        (issue 36 item 13: at 80x24 a 7x7 grid got one line while three stayed empty): layers that do not fit
        then scroll, with a scrollbar, the cursor's tile kept in view."""
        if not height:
            return self._readable(width)
        room = (height - 2) // max(1, len(self.tiles)) - self._captions(height)
        fit = max(1, height - 2 - self._captions(height))  # one tile always fits the box
        return max(1, min(self._tile_w(width) // 2, fit, max(room, self._readable(width))))

    def _virtual(self, width: int, height: int) -> Size:
        """The size of every tile laid out in a box of `width` x `height`."""
        stride = self._tile_h(width, height) + self._captions(height)
        return Size(self.names_w + self.heads * (self._tile_w(width) + GAP), 2 + len(self.tiles) * stride)

    @property
    def names_w(self) -> int:
        """The layer names' column: "L423" and a space (the long tier's HF 100x30 walk met a 400-layer model whose
        names ran into the tiles: "L423▀▀▀")."""
        return max(GUTTER, len(f"L{max(self.layer_ids, default=0)}") + 1)

    @property
    def tile_w(self) -> int:
        return self._tile_w(self.inner.width)

    @property
    def captions(self) -> bool:
        """Whether each tile has its entropy line under it (a box too short for a tile and its caption has
        none; the key names the cursor's)."""
        return self._captions(self.inner.height)

    @property
    def tile_h(self) -> int:
        """Lines of thumbnail per tile (plus the caption line): as many as fit, at most half the width."""
        return self._tile_h(*self.inner)

    @property
    def stride(self) -> int:
        """Lines per layer: the thumbnail and its caption."""
        return self.tile_h + self.captions

    def _relayout(self) -> None:
        inner = self.inner
        self.virtual_size = self._virtual(*inner)
        show_forecast(self, inner)
        self.refresh()

    def on_resize(self) -> None:
        self._relayout()

    def tile_at(self, x: int, y: int) -> tuple[int, int] | None:
        sx, sy = self.scroll_offset
        layer, head = (y + sy - 2) // self.stride, (x + sx - self.names_w) // (self.tile_w + GAP)
        if x < self.names_w or y < 2 or not (0 <= layer < len(self.tiles) and 0 <= head < self.heads):
            return None
        return layer, head

    # -- drawing -----------------------------------------------------------------------------------
    def _thumb_line(self, grid: list[list[float]], line: int) -> list[Segment]:
        """One character line of a tile: two sampled matrix rows per line, one sampled column per cell."""
        rows, cols, w, h = len(grid), len(grid[0]), self.tile_w, self.tile_h
        hi = max((v for row in grid for v in row), default=1.0)
        out, scale = [], palette()
        for x in range(w):
            col = min(cols - 1, x * cols // w)
            colours = []
            for half in (0, 1):
                r = (2 * line + half) * rows // (2 * h)
                masked = self.mask is not None and r < len(self.mask) and self.mask[r][col]
                lvl = None if r >= rows or masked else level(grid[r][col], 0.0, hi)
                colours.append(None if lvl is None else scale[lvl])
            out.append(dense_cell(colours[0], colours[1], 1))
        return out

    def render_line(self, y: int) -> Strip:
        (width, height), (sx, sy) = self.inner, self.scroll_offset
        if not self.tiles or y >= height:  # under the horizontal scrollbar: nothing of the tiles'
            return Strip.blank(self.size.width).apply_style(self.rich_style)
        if y == 0:
            return Strip(self.legend_segments()).crop_extend(0, width, None).apply_style(self.rich_style)
        if y == 1:
            segments = [Segment(f"H{h}".ljust(self.tile_w + GAP), MARK if h == self.cursor[1] else Style())
                        for h in range(self.heads)]
            body = Strip(segments)
            left = Strip.blank(self.names_w)
        else:
            layer, within = divmod(y + sy - 2, self.stride)
            if layer >= len(self.tiles):
                return Strip.blank(width).apply_style(self.rich_style)
            segments = []
            for head, (grid, entropy) in enumerate(self.tiles[layer]):
                if within < self.tile_h:
                    segments += self._thumb_line(grid, within) if grid and grid[0] else [Segment(" " * self.tile_w)]
                else:
                    mine = (layer, head) == self.cursor
                    segments.append(Segment(f"{entropy:.2f}".center(self.tile_w), MARK if mine else Style()))
                segments.append(Segment(" " * GAP))
            body = Strip(segments)
            name = f"L{self.layer_ids[layer]}" if within == 0 else ""
            marked = within == 0 and layer == self.cursor[0]
            left = Strip([Segment(name.ljust(self.names_w), MARK if marked else Style())])
        room = max(0, width - self.names_w)
        return Strip.join([left, body.crop(sx, sx + room).extend_cell_length(room)]).apply_style(self.rich_style)

    def legend_segments(self) -> list[Segment]:
        """The scale with numbers: each tile runs from 0 to its own largest weight, so the key gives the
        cursor's tile's (the caption under each tile is its entropy)."""
        layer, head = self.cursor
        grid = self.tiles[layer][head][0]
        hi = max((v for row in grid for v in row), default=1.0)
        # Narrow legend: the numbers and a few swatches, then the words (cut at the end on a narrow screen).
        entropy = self.tiles[layer][head][1]
        lead = [Segment(f"L{self.layer_ids[layer]} H{head} "), *legend(0.0, hi, False, width=20)]
        words = f" entropy {entropy:.2f} nats · each tile 0 to its max" + \
            ("; its entropy under it" if self.captions else "")
        room = self.inner.width - sum(segment.cell_length for segment in lead)
        return [*lead, Segment(cut(words, room) if room > 1 else words)]  # never "its e" at the edge

    # -- cursor ------------------------------------------------------------------------------------
    @guarded
    def action_move(self, d_layer: int, d_head: int) -> None:
        layer = max(0, min(len(self.tiles) - 1, self.cursor[0] + d_layer))
        head = max(0, min(self.heads - 1, self.cursor[1] + d_head))
        self.cursor = (layer, head)
        th, sx, sy = self.stride, *self.scroll_offset
        top, lines = layer * th, max(1, self.inner.height - 2)
        new_y = top + th - lines if top + th > sy + lines else min(sy, top)
        left, room = head * (self.tile_w + GAP), max(1, self.inner.width - self.names_w)
        new_x = left + self.tile_w - room if left + self.tile_w > sx + room else min(sx, left)
        self.scroll_to(x=max(0, new_x), y=max(0, new_y), animate=False, immediate=True)
        self.refresh()

    def point_at(self, layer: int, head: int) -> None:
        """The cursor on layer `layer`'s head `head`: the pickers' choice, so l and h move it while the model view is
        shown (head -1, the mean of the heads, has no tile: the cursor goes to the layer, on the head it was on)."""
        if layer in self.layer_ids and self.heads:
            row, col = self.layer_ids.index(layer), head if 0 <= head < self.heads else self.cursor[1]
            if (row, col) != self.cursor:
                self.action_move(row - self.cursor[0], col - self.cursor[1])

    def action_open(self) -> None:
        if self.tiles:
            self.post_message(self.Chosen(self.layer_ids[self.cursor[0]], self.cursor[1]))

    @guarded
    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        tile = None if offset is None else self.tile_at(offset.x, offset.y)
        if tile is not None:
            self.cursor = tile
            self.action_open()
