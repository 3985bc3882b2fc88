"""The keys that bring the Experiments view's notes back into sight. At 80x24 the lesson, the form, the notes and
the figure do not fit, and `f` (or a focused figure) scrolls to the figure; the list or the table keeps the keys,
and the long tier's walk found the notes (a run's summary) out of reach. Home, and PageUp at the top, of the list
and of the results table post `NotesBack`, and the view scrolls its column home.
"""

from __future__ import annotations

from textual.events import Resize
from textual.message import Message
from textual.widgets import OptionList

from tui_lab.app.widgets.marked_table import MarkedTable
from tui_lab.app.widgets.table_fill import fill_table, folded


class NotesBack(Message):
    """Home or PageUp at the top: scroll the notes back into sight."""


class ExperimentList(OptionList):
    """The experiments' list."""

    def action_first(self) -> None:
        super().action_first()
        self.post_message(NotesBack())

    def action_page_up(self) -> None:
        super().action_page_up()
        if self.highlighted in (None, 0):
            self.post_message(NotesBack())


class FigureTable(MarkedTable):
    """A result's table (rows picked whole: Home, which moves a cell cursor to the first column, has nothing to
    move). Wider than its room, it shows whole columns and marks the side where more are (MarkedTable); a column
    wider than the room by itself (a checkpoint's path) folds into lines, again whenever the width changes."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.table: tuple[list, list] = ([], [])  # the labels and rows as given
        self._filled: int | None = None  # the room the table was last filled in (None: not since it was given)

    def set_table(self, labels: list, rows: list) -> None:
        self.table, self._filled = (list(labels), [list(row) for row in rows]), None
        self._fill()

    def on_resize(self, event: Resize) -> None:
        self._fill()

    def _fill(self) -> None:
        room, (labels, rows) = self.scrollable_content_region.width, self.table
        if self._filled == room:
            return
        row = self.cursor_row
        fill_table(self, labels, folded(labels, rows, room, self.cell_padding))
        self._filled = room
        if rows:
            self.move_cursor(row=min(row, len(rows) - 1))

    def action_scroll_home(self) -> None:
        super().action_scroll_home()
        self.post_message(NotesBack())

    def action_scroll_top(self) -> None:
        super().action_scroll_top()
        self.post_message(NotesBack())

    def action_page_up(self) -> None:
        at_top = self.cursor_row == 0
        super().action_page_up()
        if at_top:
            self.post_message(NotesBack())
