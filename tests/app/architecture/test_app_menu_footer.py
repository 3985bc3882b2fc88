"""With a form field's menu open at 80x24 the footer keeps room: Esc's "Dismiss menu", the view keys and q quit,
none drawn over another. ^s, ^r and ^t stood beside them and the footer's keys overlapped ("▏^p p"; the crawler's
long tier); they are off the footer while the menu has the keys, and back once it closes."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from screen_rules import overlaps
from textual.widgets import Select


async def test_an_open_menu_leaves_the_footer_room_at_80x24():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("1")  # a first launch opens on the tour
        view = app.view("architecture")
        await wait_for(pilot, lambda: any(s.region.area for s in view.query(Select)), 30)
        select = next(s for s in view.query(Select) if s.region.area)  # the first menu on screen
        select.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: select.expanded, 10)
        await pilot.pause()
        footer = screen_lines(app)[-1]
        assert "esc" in footer and "views" in footer and "^s" not in footer, footer
        assert not [o for o in overlaps(app) if "Footer" in o], overlaps(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not select.expanded, 10)
        await wait_for(pilot, lambda: "^s apply" in screen_lines(app)[-1], 10)
        assert "q quit" in screen_lines(app)[-1]
