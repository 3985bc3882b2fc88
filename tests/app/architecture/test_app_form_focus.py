"""The Architecture form's focus and tabs, read from the rendered screen (issue 36 item 16): the field being
edited has its name painted (the editor's own focus was background 234 -> 235, nearly invisible), and ctrl+t
steps through the results' tabs, from a field too, as the footer says."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, view_mounted, wait_for, wait_ready
from screen_reader import read_svg
from textual.widgets import Input, TabbedContent

SIZE = (80, 24)


def name_painted(app, name: str) -> bool:
    screen = read_svg(app.export_screenshot(), *SIZE)
    y = next(y for y in range(screen.height) if screen.line(y).startswith(f"{name} "))
    return all(screen.painted(y, x) for x in range(len(name)))


async def test_the_focused_field_shows_and_ctrl_t_steps_through_the_tabs():
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        view = await view_mounted(pilot, "architecture")
        app.show_view("architecture")
        await wait_for(pilot, lambda: "d_model " in screen_text(app))
        assert "^t tab" in screen_lines(app)[-1]
        assert not name_painted(app, "heads") and not name_painted(app, "d_model")
        app.query_one("#f-heads", Input).focus()
        await pilot.pause(0.2)
        assert name_painted(app, "heads") and not name_painted(app, "d_model")
        tabs = app.query_one("#arch-tabs", TabbedContent)
        seen = [tabs.active]
        for _ in range(5):
            await pilot.press("ctrl+t")
            await pilot.pause(0.2)
            seen.append(tabs.active)
        assert seen == ["arch-summary", "arch-model", "arch-shapes", "arch-compare", "arch-layer", "arch-summary"]
        assert app.query_one("#f-heads", Input).value == "4"  # nothing typed into the field
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "H heads 4" in screen_text(app))  # the Model tab, drawn
        assert view.is_mounted
