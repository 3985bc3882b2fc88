"""The table rule of tests/screen_rules.py on a real screen: a row's cells read whole on its line pass, a column
drawn narrower than its cells ("withou", "4.77e" under headers "result" and "value": the long tier's English
160x48 walk) is found, and a table that scrolls sideways (its scrollbar the mark) is let be."""

from __future__ import annotations

from app_support import screen_lines
from screen_rules import table_cells
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable

ROWS = [["loss without positions", "4.77e-05"], ["loss with positions", "3.142"], ["gap", "1.6"]]


class OneTable(App):
    def __init__(self, widths: tuple[int | None, int | None], rows: list[list[str]] = ROWS) -> None:
        super().__init__()
        self.widths, self.rows = widths, rows

    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, width in zip(("result", "value"), self.widths, strict=True):
            table.add_column(label, width=width)
        table.add_rows(self.rows)


async def _found(widths, size=(60, 10), rows=ROWS, scroll: int = 0) -> list[str]:
    app = OneTable(widths, rows)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.query_one(DataTable).scroll_to(y=scroll, animate=False)
        await pilot.pause()
        return table_cells(app, screen_lines(app))


async def test_whole_cells_pass_and_a_column_narrower_than_its_cells_is_found():
    assert await _found((None, None)) == []
    found = await _found((6, 5))  # as wide as the headers
    assert any("'loss without positions'" in f for f in found) and any("'4.77e-05'" in f for f in found), found
    assert not any("'gap'" in f or "'1.6'" in f for f in found), found  # the cells that fit are not named


async def test_a_table_scrolling_sideways_is_not_called_cut():
    assert await _found((40, 30), size=(40, 10)) == []


async def test_rows_scrolled_under_the_header_are_not_read_from_it():
    """Scrolled down, the first rows are hidden under the header (the head detectors' table at 80x24): the rule
    reads each shown row on its own line, and still finds a narrow column there."""
    rows = [[f"L{i}H{i % 4}", f"0.{i:03d}"] for i in range(30)]
    assert await _found((None, None), size=(40, 8), rows=rows, scroll=5) == []
    found = await _found((2, None), size=(40, 8), rows=rows, scroll=5)
    assert found and all("'L" in f for f in found) and not any("L0H0" in f or "L4H0" in f for f in found), found


class TallTable(OneTable):
    CSS = "DataTable { height: 40; max-height: 40; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield DataTable()


async def test_a_sideways_scrollbar_out_of_sight_is_no_mark():
    """A table wider than its room, taller than its pane: its sideways scrollbar is below the pane's bottom, so the
    rows read cut with no mark (Experiments' tokens table at 80x24, the long tier's HF walk), and the rule finds
    the cells out of room."""
    rows = [[f"row {i} of the table", f"{i}.123456789"] for i in range(30)]
    app = TallTable((30, 20), rows)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        table = app.query_one(DataTable)
        assert table.show_horizontal_scrollbar
        found = table_cells(app, screen_lines(app))
        assert any("1.123456789" in f for f in found), found
