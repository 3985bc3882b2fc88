"""The field rule of tests/screen_rules.py on a real screen: a value is read as drawn, a trailing space (which draws
nothing) not counted as missing; a value the field does not show is found (the crawler's random walk left 'The
streets were wet ' after ctrl+backspace and the rule called the field cut)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_ready
from screen_rules import input_values
from textual.widgets import Input


async def test_a_trailing_space_is_not_a_cut_and_a_hidden_value_is_found():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await view_mounted(pilot, "attention")
        await pilot.pause()
        field = app.query_one("#att-src", Input)
        field.value = "The streets were wet "
        app.set_focus(None)
        await pilot.pause()
        assert not input_values(app, screen_lines(app))
        lines = [line.replace("wet", "   ") for line in screen_lines(app)]  # as if the field drew less
        assert any("#att-src" in found for found in input_values(app, lines)), input_values(app, lines)
