"""A table wider than its room that shows whole columns only and marks the side where more are.

A DataTable scrolls sideways, and the pane's edge cut whichever column sat there ("0.23" of 0.2326); its
scrollbar, the only mark, is its last row, out of sight when the table is taller than what shows it (Experiments'
tokens table at 80x24: the long tier's translator walk). Here a column the edge would cut is drawn blank, each
line (header and rows) ends with `›` while columns lie to the right and starts with `‹` after its fixed columns
while columns lie to the left, and ←/→ move a whole column at a time.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import DataTable

MORE_RIGHT, MORE_LEFT = "›", "‹"


class MarkedTable(DataTable):
    def _edges(self) -> tuple[int, list[int]]:
        """The fixed columns' width, and each column's left edge on the whole line, then the last one's right."""
        widths = [column.get_render_width(self) for column in self.ordered_columns]
        edges = [0]
        for width in widths:
            edges.append(edges[-1] + width)
        return sum(widths[: self.fixed_columns]), edges

    def _window(self, fixed: int) -> tuple[int, int]:
        """The cells [left, right) of the whole line that show beside the fixed columns."""
        x = round(self.scroll_x)
        return x + fixed, x + self.size.width

    def hidden_sides(self) -> tuple[bool, bool]:
        """Whether columns lie left of and right of what shows (beside the fixed ones)."""
        fixed, edges = self._edges()
        return self._sides(edges, *self._window(fixed))

    def _sides(self, edges: list[int], left: int, right: int) -> tuple[bool, bool]:
        scrollable = edges[self.fixed_columns:]
        return (len(scrollable) > 1 and left > scrollable[0]), (len(scrollable) > 1 and right < scrollable[-1])

    def _drawn_line(self, y: int) -> bool:
        """Whether screen line `y` holds the header or a row (not the blank under the last row)."""
        header = self.header_height if self.show_header else 0
        return (y if y < header else y + round(self.scroll_y)) < self.virtual_size.height

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        fixed, edges = self._edges()
        if edges[-1] <= self.size.width or self.size.width <= fixed + 2 or not self._drawn_line(y):
            return strip  # every column fits, no room to mark anything, or no row here
        left, right = self._window(fixed)
        for start, end in zip(edges[self.fixed_columns:], edges[self.fixed_columns + 1:], strict=False):
            cut = start < right and end > left and not (left <= start and end <= right)
            if cut and end - start <= right - left:  # a column wider than the room shows cut (the mark says so)
                strip = _blanked(strip, max(start, left) - left + fixed, min(end, right) - left + fixed)
        more_left, more_right = self._sides(edges, left, right)  # the edges once per line, not again
        if more_right:
            strip = _marked(strip, self.size.width - 1, MORE_RIGHT)
        if more_left:
            strip = _marked(strip, fixed, MORE_LEFT)
        return strip

    # ←/→ move a whole column: the pane's edges fall between columns.
    def action_scroll_right(self) -> None:
        self._to_column(+1)

    def action_scroll_left(self) -> None:
        self._to_column(-1)

    def action_cursor_right(self) -> None:
        if self.show_cursor and self.cursor_type in ("cell", "column"):
            super().action_cursor_right()
        else:
            self._to_column(+1)

    def action_cursor_left(self) -> None:
        if self.show_cursor and self.cursor_type in ("cell", "column"):
            super().action_cursor_left()
        else:
            self._to_column(-1)

    def _to_column(self, step: int) -> None:
        fixed, edges = self._edges()
        starts = [edge - fixed for edge in edges[self.fixed_columns:-1]]  # scroll_x that puts each column first
        x = round(self.scroll_x)
        if step > 0:
            i = bisect_right(starts, x)
            target = starts[i] if i < len(starts) else self.max_scroll_x
        else:
            i = bisect_left(starts, x) - 1
            target = starts[i] if i >= 0 else 0
        self.scroll_to(x=min(max(target, 0), self.max_scroll_x), animate=False)


def _blanked(strip: Strip, a: int, b: int) -> Strip:
    """`strip` with cells [a, b) drawn as spaces in their own style (a zebra row keeps its colour)."""
    middle = [Segment(" " * segment.cell_length, segment.style) for segment in strip.crop(a, b)]
    return Strip([*strip.crop(0, a), *middle, *strip.crop(b, strip.cell_length)])


def _marked(strip: Strip, x: int, mark: str) -> Strip:
    """`strip` with `mark` in cell x, bold in that cell's colours."""
    cell = list(strip.crop(x, x + 1))
    style = (cell[0].style or Style()) + Style(bold=True) if cell else None
    return Strip([*strip.crop(0, x), Segment(mark, style), *strip.crop(x + 1, strip.cell_length)])
