"""The read-out under a heatmap ends in a number: it keeps a free cell before the scrollbar Textual shows, even
where the layout's forecast of its scrollbars was wrong (the long tier's English 80x24 walk at db2fb17, seed
378077703: "layer [2] '2_pre' -> position [1] '␣the': 0.5566" against the logit lens grid's scrollbar)."""

from __future__ import annotations

from app_support import screen_lines
from screen_rules import cut_numbers, forecast_rooms
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Size

from tui_lab.app.textual_private import refresh_scrollbars
from tui_lab.app.widgets import heatmap, scroll_room
from tui_lab.app.widgets.heatmap import Heatmap

ROWS = ["0_pre", "1_pre", "2_pre", "3_pre", "final"]
COLS = ["In", "␣the", "␣morning", ",", "␣Anna", "␣walked", "␣to"]


class Box(App):
    CSS = "#box { width: 78; height: 6; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Heatmap(id="map")

    def on_mount(self) -> None:
        values = [[(r * 7 + c) / 35 for c in range(7)] for r in range(5)]
        self.query_one(Heatmap).set_grid(values, ROWS, COLS, axes=("layer", "position"), lo=0.0, hi=1.0)


def blind_forecast(monkeypatch) -> None:
    """The forecast made blind to scrollbars, and Textual left to its own rule (`overflow: auto`): the grid needs
    more lines than the box, so Textual shows a scrollbar the layout did not foresee."""
    monkeypatch.setattr(heatmap, "room_inside_scrollbars", lambda box, bar_w, bar_h, content: Size(*box))
    monkeypatch.setattr(heatmap, "show_forecast", lambda widget, inner: refresh_scrollbars(widget))
    monkeypatch.setattr(scroll_room, "show_forecast", lambda widget, inner: refresh_scrollbars(widget))


async def test_a_scrollbar_the_layout_did_not_foresee_leaves_the_value_whole(monkeypatch):
    blind_forecast(monkeypatch)
    app = Box()
    async with app.run_test(size=(80, 8)) as pilot:
        grid = app.query_one(Heatmap)
        await pilot.pause()
        grid.move_cursor(2, 1)
        await pilot.pause()
        assert grid.show_vertical_scrollbar and grid.inner.width == 78  # the forecast and Textual disagree
        lines = screen_lines(app)
        readout = next(line for line in lines if "->" in line)
        assert "0." in readout, lines
        assert not cut_numbers([line[:76] for line in lines], 76), "\n".join(lines)


async def test_the_screen_rule_names_a_forecast_textual_disagrees_with(monkeypatch):
    app = Box()
    async with app.run_test(size=(80, 8)) as pilot:
        await pilot.pause()
        assert forecast_rooms(app) == []  # the forecast as built: Textual's own room
    blind_forecast(monkeypatch)
    app = Box()
    async with app.run_test(size=(80, 8)) as pilot:
        await pilot.pause()
        assert forecast_rooms(app) == ["Heatmap#map laid out in 78x6, its scrollbars leave 76x6"]


async def test_a_grid_that_fits_once_its_box_shrinks_shows_no_scrollbar():
    """Shrunk from 8 lines to 7, the grid folds its legend into the read-out line and fits: no scrollbar (Textual
    had decided the scrollbars for the old layout, 8 lines in 7, before the grid laid itself out anew; the crawler
    met it as the logit lens at 80x22, its read-out beside a scrollbar nobody needed)."""
    app = Box()
    async with app.run_test(size=(80, 12)) as pilot:
        box, grid = app.query_one("#box"), app.query_one(Heatmap)
        box.styles.height = 8
        await pilot.pause()
        assert grid.virtual_size.height == 8 and not grid.show_vertical_scrollbar  # legend on its own line
        box.styles.height = 7
        await pilot.pause()
        await pilot.pause()
        assert grid.virtual_size.height == 7, grid.virtual_size  # the legend folded: the grid fits
        assert not grid.show_vertical_scrollbar and forecast_rooms(app) == []


class StyledBox(Box):
    CSS = Box.CSS + " Heatmap { overflow-y: scroll; }"


async def test_the_scrollbars_shown_are_the_forecasts_whatever_textual_would_decide():
    """Textual shows the scrollbars the grid laid itself out inside, not ones its own rules would pick (here a
    stylesheet's `overflow-y: scroll`; in the long tier's walks, a vertical scrollbar kept beside the DLA map,
    the Tour's grid and the alignment map, by a path not reproduced): the forecast decides them, so what the grid
    draws to its room's edge never lies under one."""
    app = StyledBox()
    async with app.run_test(size=(80, 12)) as pilot:
        box, grid = app.query_one("#box"), app.query_one(Heatmap)
        box.styles.height = 9
        await pilot.pause()
        assert grid.inner == grid.size and not grid.show_vertical_scrollbar, (grid.inner, grid.size)
        assert forecast_rooms(app) == []
        box.styles.height = 5  # too short: the forecast takes a scrollbar's room, and Textual shows it
        await pilot.pause()
        assert grid.inner.width == 76 and grid.show_vertical_scrollbar and forecast_rooms(app) == []


class FullBox(Box):
    CSS = "#box { width: 78; height: 1fr; }"


async def test_the_scrollbars_follow_a_new_box_before_its_resize_handler_runs():
    """Textual gives a widget its new size and decides its scrollbars in one call, during a layout, and the Resize
    handler that lays the grid out for the new box runs later: between them the old box's scrollbars stood beside
    a grid laid out for the new one (the long tier's HF 160x48 walk at 7cd90f9, the positional table laid out in
    154x34, Textual leaving 156x34). The layout is made here as Textual makes it for a frame, for a terminal
    shrunk to 5 lines, and read before anything is processed after it."""
    app = FullBox()
    async with app.run_test(size=(80, 9)) as pilot:
        grid = app.query_one(Heatmap)
        await pilot.pause()
        assert not grid.show_vertical_scrollbar and forecast_rooms(app) == []
        app.screen._refresh_layout(Size(80, 5))  # sizes given, the Resize events only queued
        assert grid.size == Size(78, 5)
        assert grid.inner.width == 76 and grid.show_vertical_scrollbar, grid.inner
        assert forecast_rooms(app) == []
