"""A cut line says so and never ends inside a word or a number; a table leaves out the columns it cannot show
whole (tui_lab/app/widgets/cut.py, whole_columns.py; issue 25: 80x24 never lies)."""

from __future__ import annotations

import re

import pytest
from app_support import screen_lines
from rich.cells import cell_len
from screen_rules import cut_numbers
from textual.app import App

from tui_lab.app.widgets.cut import cut
from tui_lab.app.widgets.whole_columns import WholeColumns

READOUT = "query [2] 'zwei'  ->  key [3] 'two':  0.7499  (decoder input 'hundert' predicts it)"


@pytest.mark.parametrize("width", range(8, len(READOUT) + 2))  # from where a space fits
def test_a_cut_fits_ends_at_a_space_and_never_touches_a_number(width):
    out = cut(READOUT, width)
    assert cell_len(out) <= width
    if out == READOUT:
        return
    head = out.removesuffix("…").rstrip()
    assert out.endswith("…") and READOUT.startswith(head)
    assert not re.search(r"\d…", out)  # "0.74…" would read as a value
    assert READOUT[len(head):len(head) + 1] in (" ", ":", "") or head == ""  # whole words only


def test_cut_keeps_a_whole_number_apart_from_the_ellipsis_and_drops_a_cut_one():
    assert cut("entropy 1.75 nats", 15) == "entropy 1.75 …"
    assert cut("entropy 1.75 nats", 12) == "entropy…"
    assert cut("13,222,543,360", 8) == "…"  # whole or absent
    assert cut("short", 10) == "short"


SHAPE_HEADERS = ("module", "output", "params", "input", "kind")
SHAPE_ROWS = [("tok_embed", "(2,16,4096)", "131,072,000", "(2,16)", "embedding"),
              ("decoder.0", "(2,16,4096)", "202,383,360", "(2,16,4096)", "block")]


class TableApp(App):
    def compose(self):
        yield WholeColumns(id="t")


async def test_a_narrow_table_shows_only_whole_columns_and_gets_them_back_when_wider():
    app = TableApp()
    async with app.run_test(size=(36, 8)) as pilot:
        table = app.query_one(WholeColumns)
        table.set_table(SHAPE_HEADERS, SHAPE_ROWS)
        await pilot.pause()
        assert table.shown == 2 and not cut_numbers(screen_lines(app), 36)  # params would be cut: left out
        await pilot.resize_terminal(60, 8)
        await pilot.pause()
        assert table.shown == 4 and "131,072,000" in "\n".join(screen_lines(app))


async def test_whole_columns_have_their_widths_from_the_first_frame():
    """The shapes table refilled (a new model, a resize) had its columns at the headers' widths until the table
    measured its rows when idle, and a frame drawn first read 'tok_em' and '(2,16,' at 160x48 (the long tier's
    translator walk): the widths are given with the columns."""
    from screen_rules import given_widths, table_cells

    app = TableApp()
    async with app.run_test(size=(100, 8)) as pilot:
        table = app.query_one(WholeColumns)
        table.set_table(SHAPE_HEADERS, SHAPE_ROWS)
        assert given_widths(table) == [9, 11, 11, 11, 9]  # before any idle
        await pilot.pause()
        assert table_cells(app, screen_lines(app)) == []
