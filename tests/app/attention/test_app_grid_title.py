"""The Attention grid's title fits its own width whatever changes it: a scrollbar or a neighbour taking columns
changes the title's width and not the view's (no Resize reaches the view), and the long tier's English 80x24 walk
found the title cut by its pane with no mark. Each width from too narrow for the kind's short name to wide enough
for the whole title, reached by a resize the title alone sees."""

from __future__ import annotations

from app_support import screen_lines
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from tui_lab.app.views.attention.draw import GridTitle
from tui_lab.app.views.attention.grids import KIND_TITLES, fit_title

KIND = "decoder-self"
WHOLE = f"shipped toy · {KIND_TITLES[KIND]} · layer 1 · head 3 · 7 x 7 · entropy 1.25 nats"


class TitleRow(App):
    CSS = "GridTitle { width: 1fr; height: 1; } #beside { height: 1; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield GridTitle()
            yield Static("", id="beside")


async def test_the_title_refits_when_only_its_own_width_changes():
    app = TitleRow()
    async with app.run_test(size=(100, 3)) as pilot:
        app.query_one(GridTitle).show(WHOLE, KIND)
        await pilot.pause()
        for taken in range(0, 80, 7):
            app.query_one("#beside").styles.width = taken
            await pilot.pause()
            width = 100 - taken
            shown = screen_lines(app)[0][:width].rstrip()
            assert shown == fit_title(WHOLE, KIND, width), (width, shown)
            assert shown == WHOLE or "…" in shown or KIND_TITLES[KIND] not in shown, (width, shown)
