"""The one grid widget (Attention, Generate, Train's alignment): a colour heatmap drawn with the line API.

Every column owns one fixed-width slot (`grid_layout.Layout.cell_w`): its label and its cells start at
the same character, so what the eye reads under a label is that label's column. Two densities: `full`
(each matrix row one or more lines tall, cells as wide as the box allows) and `dense` (two matrix rows
per line with the upper-half block: foreground = upper row, background = lower row). Masked positions
are hatched (dense: blank), never a colour of the scale. A legend line above the grid shows the colour
scale with its min and max; a read-out line below names the cursor's query, key and weight; `#` writes
the weight into each cell. The legend, the column labels and the read-out stay put while the grid scrolls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.segment import Segment
from textual.binding import Binding
from textual.events import MouseMove
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui_lab.app.guard import guarded
from tui_lab.app.widgets.grid_body import cells_line
from tui_lab.app.widgets.grid_cells import legend, palette
from tui_lab.app.widgets.grid_layout import READOUT_LINES, Layout, layout, printable
from tui_lab.app.widgets.grid_lines import describe_cell, header_line, key_line, readout_line, row_label, window
from tui_lab.app.widgets.scroll_room import ForecastScrollView, room_inside_scrollbars, show_forecast


class Heatmap(ForecastScrollView, can_focus=True):
    """`set_grid(values, row_labels, col_labels, mask=...)`; NaN cells are blank (separators, no data)."""

    BINDINGS = [
        Binding("up", "move(-1, 0)", "cell up", show=False),
        Binding("down", "move(1, 0)", "cell down", show=False),
        Binding("left", "move(0, -1)", "cell left", show=False),
        Binding("right", "move(0, 1)", "cell right", show=False),
        Binding("z", "toggle_density", "dense/full"),
        Binding("number_sign", "toggle_numbers", "numbers"),
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

    def __init__(self, *, id: str | None = None, classes: str | None = None, numbered: bool = False,
                 keys_note: str = "") -> None:
        """`numbered`: columns too narrow for their labels across get numbers and a key (grid_layout), and
        a large grid stays one line per row (every row labelled) unless `z` asks for dense. `keys_note` (the
        grid's keys, for a grid whose footer leaves them off) follows the legend where the line has room."""
        super().__init__(id=id, classes=classes)
        self.numbered, self.keys_note = numbered, keys_note
        self.values: list[list[float]] = []
        self.mask: list[list[bool]] | None = None  # True = masked (may not attend)
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.row_notes: list[str] = []  # said after the value in the read-out (e.g. the decoder input)
        self.axes = ("query", "key")
        self.cursor: tuple[int, int] = (0, 0)
        self.dense = False
        self.numbers = False
        self._lo, self._hi = 0.0, 1.0
        self._lines: dict[int, Strip] = {}
        self._palette: tuple | None = None  # the colours the cached lines were drawn in (read at the first line:
        # the scale is computed once, ~0.1 s, and a grid mounted empty never needs it before its data comes)
        self._layout: tuple[tuple, Layout, Size] | None = None
        self.empty_note = ""  # said on the first line while there is no grid

    # -- data --------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return len(self.values), len(self.values[0]) if self.values else 0

    def set_grid(self, values: Sequence[Sequence[float]], row_labels: Sequence[str], col_labels: Sequence[str],
                 dense: bool | None = None, lo: float | None = None, hi: float | None = None,
                 mask: Sequence[Sequence[bool]] | None = None, axes: tuple[str, str] = ("query", "key"),
                 row_notes: Sequence[str] | None = None) -> None:
        self.values = [list(map(float, row)) for row in values]
        rows, cols = self.shape
        self.mask = [list(map(bool, row)) for row in mask] if mask is not None and rows else None
        self.row_labels = [printable(str(x)) for x in row_labels][:rows] + [""] * max(0, rows - len(row_labels))
        self.col_labels = [printable(str(x)) for x in col_labels][:cols] + [""] * max(0, cols - len(col_labels))
        self.row_notes = list(row_notes or [])
        self.axes = axes
        masks = self.mask or [[False] * cols] * rows
        shown = [v for row, hidden in zip(self.values, masks, strict=False)
                 for v, m in zip(row, hidden, strict=False) if not m and math.isfinite(v)]
        self._lo = min(shown, default=0.0) if lo is None else lo
        self._hi = max(shown, default=1.0) if hi is None else hi
        self.dense = (rows > 40 or cols > 60) and not self.numbered if dense is None else dense
        self.cursor = (min(self.cursor[0], max(rows - 1, 0)), min(self.cursor[1], max(cols - 1, 0)))
        self._relayout()

    def masked(self, row: int, col: int) -> bool:
        return self.mask is not None and row < len(self.mask) and col < len(self.mask[row]) and self.mask[row][col]

    @property
    def scale(self) -> tuple[float, float]:
        return self._lo, self._hi

    # -- geometry ----------------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        """Recomputed only when the data, the size or a toggle changed (it is read for every cell)."""
        return self._fitted()[0]

    @property
    def inner(self) -> Size:
        """The box the grid is drawn in: the widget less the scrollbars its layout makes Textual show."""
        return self._fitted()[1]

    def _fitted(self) -> tuple[Layout, Size]:
        rows, cols = self.shape
        key = (rows, cols, self.size.width, self.size.height, self.dense, self.numbers, id(self.row_labels),
               id(self.col_labels))
        if self._layout is None or self._layout[0] != key:
            self._layout = (key, *self._fit())
        return self._layout[1], self._layout[2]

    def _fit(self) -> tuple[Layout, Size]:
        """The grid laid out in the room its own scrollbars leave (`scroll_room`): nothing under a scrollbar."""
        laid: dict[tuple[int, int], Layout] = {}

        def content(w: int, h: int) -> Size:
            laid[w, h] = self._layout_in(w, h)
            return self._content_size(laid[w, h])

        inner = room_inside_scrollbars(self.size, self.styles.scrollbar_size_vertical,
                                       self.styles.scrollbar_size_horizontal, content)
        lay = laid.get((inner.width, inner.height)) or self._layout_in(inner.width, inner.height)
        return lay, inner

    def _layout_in(self, width: int, height: int) -> Layout:
        rows, cols = self.shape
        return layout(rows, cols, self.row_labels, self.col_labels, width, height, self.dense, self.numbers,
                      self.numbered, width)

    @staticmethod
    def _content_size(lay: Layout) -> Size:
        """Every column and line of the grid, its labels, legend and read-out."""
        return Size(lay.gutter + lay.grid_width, lay.top + lay.grid_lines + READOUT_LINES)

    @property
    def key_width(self) -> int:
        """The width the legend and the numbered columns' key get: inside the scrollbars (they stay put)."""
        return self.inner.width

    @property
    def cell_w(self) -> int:
        return self.layout.cell_w

    @property
    def label_width(self) -> int:
        return self.layout.gutter

    @property
    def header(self) -> int:
        """Lines above the grid (legend and column labels)."""
        return self.layout.top

    def _relayout(self) -> None:
        self._lines.clear()
        lay, inner = self.layout, self.inner
        room = max(1, inner.width - lay.gutter)
        # A grid wider than its box gets blank room after its last column (what the view has over the columns it
        # shows), so scrolled to its end the view still starts on a column's start and shows the last one.
        whole = self._content_size(lay)
        pad = room - self._shown_room(room) if whole.width > inner.width else 0
        self.virtual_size = Size(whole.width + pad, whole.height)
        show_forecast(self, inner)
        self.refresh()

    def _shown_room(self, room: int) -> int:
        """The characters of cells a view `room` wide shows: whole columns only when the grid is wider (a column
        the edge would cut read "0.0" or "0" against it, with no mark), and one-character columns one short of the
        edge: their labels' first characters ("0,7" "0,9" ... "4,13") ran into it as one long cut number."""
        lay = self.layout
        if lay.grid_width <= room or not lay.cell_w:
            return room
        return room - room % lay.cell_w - (1 if lay.cell_w == 1 and room > 1 else 0)

    def on_resize(self) -> None:
        """Laid out for the new box, scrolled the least that keeps the cursor's cell in sight (a box shrunk under a
        cursor on its last row left the row out of sight, the read-out naming a cell nobody could see)."""
        self._relayout()
        rows, cols = self.shape
        if rows and cols:
            self._scroll_to_cell(*self.cursor)

    @property
    def _view_lines(self) -> int:
        return max(1, self.inner.height - self.layout.top - READOUT_LINES)

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """Widget coordinates -> (row, col), or None off the grid (dense mode picks the upper row)."""
        lay, (sx, sy) = self.layout, self.scroll_offset
        line = y - lay.top
        if x < lay.gutter or not 0 <= line < self._view_lines or \
                x - lay.gutter >= self._shown_room(max(1, self.inner.width - lay.gutter)):
            return None
        row, col = lay.row_of_line(line + sy), (x - lay.gutter + sx) // lay.cell_w
        rows, cols = self.shape
        return (row, col) if 0 <= row < rows and 0 <= col < cols else None

    # -- drawing -----------------------------------------------------------------------------------
    def _grid_line(self, line: int) -> Strip:
        """One terminal line of cells (grid_body), cached until data, cursor, size or theme change."""
        if self._palette is not palette():  # the theme changed: cached lines wear the old colours
            self._lines.clear()
            self._palette = palette()
        if line not in self._lines:
            self._lines[line] = cells_line(self.layout, line, self.values, self.masked, self.scale, self.cursor,
                                           self.numbers)
        return self._lines[line]

    def _header_line(self, y: int) -> Strip:
        return header_line(self.layout, self.col_labels, self.cursor[1], y)

    def _key_line(self, i: int) -> Strip:
        return key_line(self.col_labels, self.key_width, self.layout.header - 1, self.cursor[1], i)

    def legend_text(self, width: int | None = None) -> list[Segment]:
        parts = legend(*self.scale, self.mask is not None and any(any(row) for row in self.mask), width)
        note = f"  {self.keys_note}" if self.keys_note else ""
        fits = width is not None and Segment.get_line_length(parts) + len(note) < width
        return [*parts, Segment(note)] if note and fits else parts

    def render_line(self, y: int) -> Strip:
        lay, (sx, sy), (width, height) = self.layout, self.scroll_offset, self.inner
        if not self.values or y >= height:  # under the horizontal scrollbar: nothing of the grid's
            said = self.empty_note if not self.values and y == 0 else ""  # an empty box read as a broken grid
            return Strip([Segment(said)]).crop_extend(0, self.size.width, None).apply_style(self.rich_style)
        if y < lay.legend_lines:
            return Strip(self.legend_text(self.key_width)).crop_extend(0, width, None).apply_style(self.rich_style)
        if y >= height - READOUT_LINES:
            folded = [] if lay.legend_lines else [*self.legend_text(), Segment("  ")]
            # The read-out ends in a number: it is fitted to the room Textual's own scrollbars leave, should they
            # differ from the layout's (the long tier's English 80x24 walk once caught a value against a scrollbar
            # the layout had not foreseen, after a theme toggle; not reproduced since).
            shown = min(width, self.scrollable_content_region.width)
            room = shown - sum(seg.cell_length for seg in folded)
            return readout_line(folded, self.describe_cursor(room), width).apply_style(self.rich_style)
        left = Strip.blank(lay.gutter)
        if lay.numbered and lay.legend_lines < y < lay.top:  # the key stays put while the grid scrolls
            return self._key_line(y - lay.legend_lines - 1).crop_extend(0, width, None).apply_style(self.rich_style)
        if y < lay.top:
            body = self._header_line(y - lay.legend_lines)
        else:
            line = y - lay.top + sy
            if line >= lay.grid_lines:
                return Strip.blank(width).apply_style(self.rich_style)
            body = self._grid_line(line)
            row = lay.row_of_line(line)
            if lay.label_line(row) == line:
                label = self.row_labels[row] if row < len(self.row_labels) else ""
                left = row_label(label, lay.gutter, self.cursor[0] // lay.rows_per_line == row // lay.rows_per_line)
        room = max(0, width - lay.gutter)
        words = y < lay.top and bool(lay.ticks or lay.numbered)  # a header written across: no label cut
        body = window(body, sx, self._shown_room(room), words).extend_cell_length(room)  # the scrollbar tells of more
        return Strip.join([left, body]).apply_style(self.rich_style)  # the widget's background under blanks

    # -- cursor ------------------------------------------------------------------------------------
    def move_cursor(self, row: int, col: int) -> None:
        rows, cols = self.shape
        if not rows or not cols:
            return
        row, col = max(0, min(rows - 1, row)), max(0, min(cols - 1, col))
        self.cursor = (row, col)
        self._lines.clear()
        self._scroll_to_cell(row, col)
        self.refresh()
        self.post_message(self.CellHighlighted(self, row, col, self.values[row][col],
                                               self.row_labels[row], self.col_labels[col]))

    def _scroll_to_cell(self, row: int, col: int) -> None:
        """Scroll the least that shows the cell inside the fixed legend, labels and read-out."""
        room = self._shown_room(max(1, self.inner.width - self.layout.gutter))
        x, y = self.layout.scroll_showing(row, col, self.scroll_offset, self._view_lines, room)
        if (x, y) != tuple(self.scroll_offset):
            self.scroll_to(x=x, y=y, animate=False, immediate=True)

    @guarded
    def action_move(self, d_row: int, d_col: int) -> None:
        self.move_cursor(self.cursor[0] + d_row, self.cursor[1] + d_col)
        self._into_view()

    def action_toggle_density(self) -> None:
        self.dense = not self.dense
        self._relayout()
        self._say_if_empty(f"z: {'dense' if self.dense else 'full'}")
        self._into_view()

    def action_toggle_numbers(self) -> None:
        """Numbers need cells at least NUMBER_W wide: full mode widens them (the grid may scroll)."""
        self.numbers = not self.numbers
        if self.numbers and self.dense:
            self.dense = False
        self._relayout()
        self._say_if_empty(f"#: numbers {'on' if self.numbers else 'off'}")
        self._into_view()

    def _into_view(self) -> None:
        """A key that acts on the grid scrolls the panes around it to show it: a grid in a scrolled pane with only
        its legend line in sight changed nothing a person could see on `z` (the long tier's translator 80x24 walk:
        the Experiments view's figure grid below the fold of its pane)."""
        self.scroll_visible(animate=False)

    def _say_if_empty(self, done: str) -> None:
        """A toggle with no grid drawn changes nothing on screen: it says what it set, for the grid to come."""
        if not self.values:
            self.notify(f"{done} for the grid to come ({self.empty_note or 'no grid yet'})", timeout=4)

    @guarded
    def on_mouse_move(self, event: MouseMove) -> None:
        offset = event.get_content_offset(self)  # event.x/y count the border; cells start inside it
        cell = None if offset is None else self.cell_at(offset.x, offset.y)
        if cell is not None and cell != self.cursor:
            self.move_cursor(*cell)

    def describe_cursor(self, width: int | None = None) -> str:
        """The cell under the cursor, in the forms `grid_lines.describe_cell` fits to `width` cells."""
        rows, cols = self.shape
        if not rows or not cols:
            return ""
        r, c = self.cursor
        v = self.values[r][c]
        value = "masked" if self.masked(r, c) else "—" if not math.isfinite(v) else f"{v:.4f}"
        note = self.row_notes[r] if r < len(self.row_notes) else ""
        return describe_cell(self.axes, f"[{r}] {self.row_labels[r]!r}", f"[{c}] {self.col_labels[c]!r}", value,
                             note, width)


class QuietHeatmap(Heatmap):
    """A grid whose # and z are named beside it (a hint line, its box, its legend's `keys_note`), not on the
    footer: at 80 columns the footer keeps its view's keys and q quit (the crawler found them pushing q quit off)."""

    BINDINGS = [Binding("z", "toggle_density", "dense/full", show=False),
                Binding("number_sign", "toggle_numbers", "# numbers", show=False)]
