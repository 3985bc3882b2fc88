"""A table that shows only the columns that fit whole (issue 25: a number is whole or absent).

A DataTable wider than its pane scrolls sideways, and the pane's edge cuts whichever column sits there:
"40,000,400" for 40,000,400,000. This one leaves out, from the right, the columns that would not fit whole
(the first always shows), and brings them back when the pane is wider. Its rows are given once, as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.events import Resize
from textual.widgets import DataTable

from tui_lab.app.widgets.table_fill import column_widths, fill_table


class WholeColumns(DataTable):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.headers: tuple[str, ...] = ()
        self.rows_text: list[tuple[str, ...]] = []
        self.shown = -1  # how many columns are on screen (-1: not drawn since the rows changed)

    def set_table(self, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.headers, self.rows_text, self.shown = tuple(headers), [tuple(r) for r in rows], -1
        self._fill()

    def on_resize(self, event: Resize) -> None:
        self._fill()

    def fitting(self, width: int) -> int:
        """How many leading columns fit whole in `width` cells (all when not laid out yet)."""
        if width <= 0:
            return len(self.headers)
        used = 0
        for i, column in enumerate(column_widths(self.headers, self.rows_text)):
            used += column + 2 * self.cell_padding
            if used > width:
                return max(i, 1)
        return len(self.headers)

    def _fill(self) -> None:
        n = self.fitting(self.scrollable_content_region.width)
        if n == self.shown:
            return
        row = self.cursor_row
        fill_table(self, self.headers[:n], [r[:n] for r in self.rows_text])  # widths given: whole from the first frame
        self.shown = n
        if self.rows_text:
            self.move_cursor(row=min(row, len(self.rows_text) - 1))
