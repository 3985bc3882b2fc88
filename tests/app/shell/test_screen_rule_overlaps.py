"""The overlap rule of tests/support/screen_rules.py and a select menu opened where it has no room below: Textual
moves the menu up over its own field (the long tier's HF 80x24 walk at a64af23, seed 1015264390: Experiments'
figure select at the screen's foot, "SelectCurrent overlaps SelectOverlay inside Select#ex-figure"), as a
desktop pop-up menu covers its button; the menu shows every option and its frame. Two widgets side by side that
share a cell still overlap."""

from __future__ import annotations

from screen_rules import overlaps
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, Select


class FootSelect(App):
    CSS = "#top { height: 1fr; } #pair Label { width: 12; } #b { offset: -4 0; }"

    def compose(self) -> ComposeResult:
        yield Label("above", id="top")
        with Horizontal(id="pair", classes="-pair"):
            yield Label("left label", id="a")
            yield Label("right label", id="b")
        yield Select([(name, name) for name in ("no results yet", "results", "table: tokens", "grid")],
                     value="results", allow_blank=False, id="figure")


async def test_a_menu_over_its_own_field_is_not_an_overlap_and_a_shared_cell_is():
    app = FootSelect()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        found = overlaps(app)
        assert found == ["Label#a overlaps Label#b inside Horizontal#pair"], found
        app.query_one("#figure", Select).expanded = True
        await pilot.pause()
        current, menu = app.query_one("SelectCurrent"), app.query_one("SelectOverlay")
        assert menu.region.overlaps(current.region)  # no room below: the menu is over its own field
        assert overlaps(app) == found
