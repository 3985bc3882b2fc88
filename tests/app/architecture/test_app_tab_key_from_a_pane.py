"""^t (next tab) works wherever the focus is, a widget inside the shown tab too: with Compare's picker focused,
hiding the pane passed the focus to its neighbour in the same pane, which brought the pane back, and ^t changed
nothing (the long tier's English 160x48 walk). Every tab, from each focusable widget in it."""

from __future__ import annotations

from app_support import app_for, wait_for, wait_ready
from textual.widgets import TabbedContent

from tui_lab.app.views.architecture.analysis import TABS

PANES = [pane for pane, _ in TABS]


async def test_ctrl_t_moves_on_from_a_widget_focused_in_every_tab():
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        view = app.view("architecture")
        tabs = app.query_one("#arch-tabs", TabbedContent)
        tried = 0
        for i, pane in enumerate(PANES):
            view.show_tab(pane)
            await wait_for(pilot, lambda pane=pane: tabs.active == pane and tabs.active_pane.query("*"), 10)
            await pilot.pause()
            inside = [w for w in tabs.active_pane.query("*") if w.focusable and w.display]
            for widget in inside[:3]:
                view.show_tab(pane)
                widget.focus()
                await pilot.pause()
                if app.focused is not widget:  # a scroll box with nothing to scroll takes no focus
                    continue
                tried += 1
                await pilot.press("ctrl+t")
                await pilot.pause(0.2)
                assert tabs.active == PANES[(i + 1) % len(PANES)], (pane, widget, app.focused)
        assert tried >= 4  # Shapes' fields, Compare's pickers, Layer's...
