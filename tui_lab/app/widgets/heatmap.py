"""A colour heatmap drawn with the line API: only the visible lines are rendered, styles are cached.

Two densities: `full` draws one matrix row per terminal line, two cells wide, with a label on every
row; `dense` packs two matrix rows into one line with the upper-half block (foreground = upper row,
background = lower row), one cell wide, so 128 x 128 is 128 x 64 characters. Long inputs scroll.
Column labels run vertically above the grid. The cursor (keys or mouse) names query, key and value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.cells import cell_len
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import MouseMove
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_lab.app.guard import guarded

LEVELS = 32
# viridis at a few stops: dark blue (low) to yellow (high); readable on dark and light backgrounds.
_STOPS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
GUTTER_MAX = 12
HEADER_MAX = 6


def _gradient(levels: int) -> list[Color]:
    colours = []
    for i in range(levels):
        t = i / (levels - 1) * (len(_STOPS) - 1)
        lo = min(int(t), len(_STOPS) - 2)
        f = t - lo
        rgb = [round(a + (b - a) * f) for a, b in zip(_STOPS[lo], _STOPS[lo + 1], strict=True)]
        colours.append(Color.from_rgb(*rgb))
    return colours


PALETTE = _gradient(LEVELS)
CURSOR = Color.parse("#ff2fa0")
EMPTY = Style()


def fit_label(text: str, width: int, align: str = "right") -> str:
    """Truncate/pad to exactly `width` terminal cells (CJK characters take two)."""
    out, used = "", 0
    for ch in text:
        w = cell_len(ch)
        if used + w > width:
            break
        out, used = out + ch, used + w
    pad = " " * (width - used)
    return pad + out if align == "right" else out + pad


class Heatmap(ScrollView, can_focus=True):
    """`set_grid(values, row_labels, col_labels)`; NaN cells are drawn blank (separators, no data)."""

    BINDINGS = [
        Binding("up", "move(-1, 0)", "cell up", show=False),
        Binding("down", "move(1, 0)", "cell down", show=False),
        Binding("left", "move(0, -1)", "cell left", show=False),
        Binding("right", "move(0, 1)", "cell right", show=False),
        Binding("z", "toggle_density", "dense/full"),
    ]
    DEFAULT_CSS = "Heatmap { height: 1fr; }"

    class CellHighlighted(Message):
        def __init__(self, heatmap: Heatmap, row: int, col: int, value: float, row_label: str, col_label: str) -> None:
            super().__init__()
            self.heatmap, self.row, self.col, self.value = heatmap, row, col, value
            self.row_label, self.col_label = row_label, col_label

        @property
        def control(self) -> Heatmap:
            return self.heatmap

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.values: list[list[float]] = []
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.cursor: tuple[int, int] = (0, 0)
        self.dense = False
        self._lo, self._hi = 0.0, 1.0
        self._styles: dict[tuple[int, int], Style] = {}
        self._lines: dict[int, Strip] = {}

    # -- data --------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return len(self.values), len(self.values[0]) if self.values else 0

    def set_grid(self, values: Sequence[Sequence[float]], row_labels: Sequence[str], col_labels: Sequence[str],
                 dense: bool | None = None, lo: float | None = None, hi: float | None = None) -> None:
        self.values = [list(map(float, row)) for row in values]
        rows, cols = self.shape
        self.row_labels = [str(x) for x in row_labels][:rows] + [""] * max(0, rows - len(row_labels))
        self.col_labels = [str(x) for x in col_labels][:cols] + [""] * max(0, cols - len(col_labels))
        finite = [v for row in self.values for v in row if math.isfinite(v)]
        self._lo = min(finite, default=0.0) if lo is None else lo
        self._hi = max(finite, default=1.0) if hi is None else hi
        self.dense = (rows > 40 or cols > 60) if dense is None else dense
        self.cursor = (min(self.cursor[0], max(rows - 1, 0)), min(self.cursor[1], max(cols - 1, 0)))
        self._relayout()

    def _relayout(self) -> None:
        self._lines.clear()
        rows, cols = self.shape
        self.virtual_size = Size(self.label_width + cols * self.cell_w, self.header + self._line_count(rows))
        self.refresh()

    # -- geometry ----------------------------------------------------------------------------------
    @property
    def cell_w(self) -> int:
        """1 in dense mode; else 2 to 6 characters, widening the cells to use a large terminal."""
        if self.dense:
            return 1
        cols = max(1, self.shape[1])
        return max(2, min(6, (self.size.width - self.label_width) // cols))

    @property
    def rows_per_line(self) -> int:
        return 2 if self.dense else 1

    @property
    def label_width(self) -> int:
        return min(GUTTER_MAX, max((cell_len(s) for s in self.row_labels), default=0)) + 1

    @property
    def header(self) -> int:
        """Lines of vertical column labels: fewer on a short terminal, so the grid keeps the room."""
        if self.cell_w >= 4:
            return 2  # labels fit across the wide cells: one line
        longest = max((len(s) for s in self.col_labels), default=0)
        room = max(2, self.size.height // 5) if self.size.height else HEADER_MAX
        return min(HEADER_MAX, longest, room) + 1

    def on_resize(self) -> None:
        self._relayout()

    def _line_count(self, rows: int) -> int:
        return (rows + self.rows_per_line - 1) // self.rows_per_line

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """Widget coordinates -> (row, col), or None off the grid (dense mode picks the upper row)."""
        sx, sy = self.scroll_offset
        line, col = y + sy - self.header, (x - self.label_width + sx) // self.cell_w
        row = line * self.rows_per_line
        rows, cols = self.shape
        if x < self.label_width or line < 0 or not (0 <= row < rows and 0 <= col < cols):
            return None
        return row, col

    # -- drawing -----------------------------------------------------------------------------------
    def _level(self, v: float) -> int | None:
        if not math.isfinite(v):
            return None
        span = self._hi - self._lo
        t = 0.5 if span <= 0 else (v - self._lo) / span
        return max(0, min(LEVELS - 1, int(t * (LEVELS - 1) + 0.5)))

    def _style(self, upper: int | None, lower: int | None) -> Style:
        key = (-1 if upper is None else upper, -1 if lower is None else lower)
        if key not in self._styles:
            fg = None if upper is None else (CURSOR if upper == LEVELS else PALETTE[upper])
            bg = None if lower is None else (CURSOR if lower == LEVELS else PALETTE[lower])
            self._styles[key] = Style(color=fg, bgcolor=bg)
        return self._styles[key]

    def _cell_level(self, row: int, col: int) -> int | None:
        if row >= len(self.values):
            return None
        if (row, col) == self.cursor:
            return LEVELS  # the cursor colour
        return self._level(self.values[row][col])

    def _grid_line(self, line: int) -> Strip:
        """The cells of one terminal line, unscrolled; cached until data or cursor change."""
        if line in self._lines:
            return self._lines[line]
        r0 = line * self.rows_per_line
        segments = []
        for col in range(self.shape[1]):
            if self.dense:
                up, low = self._cell_level(r0, col), self._cell_level(r0 + 1, col)
                if up is None and low is None:
                    segments.append(Segment(" "))
                elif up is None:
                    segments.append(Segment("▄", self._style(low, None)))
                else:
                    segments.append(Segment("▀", self._style(up, low)))
            else:
                level = self._cell_level(r0, col)
                segments.append(Segment("  ", EMPTY if level is None else self._style(None, level)))
        strip = Strip(segments, self.shape[1] * self.cell_w).simplify()
        self._lines[line] = strip
        return strip

    def _header_line(self, y: int) -> Strip:
        """Column labels written downwards, one character per line; the last header line is blank."""
        if y == self.header - 1:
            return Strip.blank(self.shape[1] * self.cell_w)
        text = []
        wide = self.cell_w >= 4
        for col, label in enumerate(self.col_labels):
            if wide:
                cut = fit_label(label, self.cell_w - 1, align="left") + " "
                text.append(Segment(cut, Style(bold=True, reverse=True) if col == self.cursor[1] else EMPTY))
                continue
            ch = label[y] if y < len(label) else ""
            ch = ch if cell_len(ch) <= self.cell_w else "·"
            ch = ch + " " * (self.cell_w - cell_len(ch))
            text.append(Segment(ch, Style(bold=True, reverse=True) if col == self.cursor[1] else EMPTY))
        return Strip(text, self.shape[1] * self.cell_w)

    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        vy = y + sy
        width = self.size.width
        label_w = self.label_width
        if vy < self.header:
            body = self._header_line(vy) if self.values else Strip.blank(0)
            left = Strip.blank(label_w)
        else:
            line = vy - self.header
            if line >= self._line_count(self.shape[0]):
                return Strip.blank(width)
            body = self._grid_line(line)
            row = line * self.rows_per_line
            label = self.row_labels[row] if row < len(self.row_labels) else ""
            on_cursor = self.cursor[0] // self.rows_per_line == line
            left = Strip([Segment(fit_label(label, label_w - 1) + " ",
                                  Style(bold=True, reverse=True) if on_cursor else EMPTY)])
        body = body.crop(sx, sx + max(0, width - label_w)).extend_cell_length(max(0, width - label_w))
        return Strip.join([left, body]).apply_style(self.rich_style)  # the widget's background under blanks

    # -- cursor ------------------------------------------------------------------------------------
    def move_cursor(self, row: int, col: int) -> None:
        rows, cols = self.shape
        if not rows or not cols:
            return
        row, col = max(0, min(rows - 1, row)), max(0, min(cols - 1, col))
        old = self.cursor
        self.cursor = (row, col)
        for r in (old[0], row):
            self._lines.pop(r // self.rows_per_line, None)
        self.scroll_to_region(Region(self.label_width + col * self.cell_w, self.header + row // self.rows_per_line,
                                     self.cell_w, 1), animate=False, spacing=None)
        self.refresh()
        self.post_message(self.CellHighlighted(self, row, col, self.values[row][col],
                                               self.row_labels[row], self.col_labels[col]))

    @guarded
    def action_move(self, d_row: int, d_col: int) -> None:
        self.move_cursor(self.cursor[0] + d_row, self.cursor[1] + d_col)

    def action_toggle_density(self) -> None:
        self.dense = not self.dense
        self._relayout()

    @guarded
    def on_mouse_move(self, event: MouseMove) -> None:
        offset = event.get_content_offset(self)  # event.x/y count the border; cells start inside it
        cell = None if offset is None else self.cell_at(offset.x, offset.y)
        if cell is not None and cell != self.cursor:
            self.move_cursor(*cell)

    def describe_cursor(self) -> str:
        rows, cols = self.shape
        if not rows or not cols:
            return ""
        r, c = self.cursor
        v = self.values[r][c]
        value = "—" if not math.isfinite(v) else f"{v:.4f}"
        return f"query [{r}] {self.row_labels[r]!r}  ->  key [{c}] {self.col_labels[c]!r}:  {value}"
