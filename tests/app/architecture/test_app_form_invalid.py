"""The Architecture form while invalid, read from the rendered screen (issue 36 item 15): the line over the fields
names the field that is wrong (the fields are below it), and typing heads 12 never leaves the right side on the
"H heads 1" of the half-typed value."""

from __future__ import annotations

from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready
from textual.widgets import Input


async def test_typing_an_invalid_value_names_the_field_and_shows_no_half_typed_numbers():
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        view = await view_mounted(pilot, "architecture")
        app.show_view("architecture")
        view.show_tab("arch-model")
        await wait_for(pilot, lambda: "H heads 4" in screen_text(app))
        app.query_one("#f-heads", Input).focus()
        await pilot.press("ctrl+u", "1")
        await wait_for(pilot, lambda: "H heads 1" in screen_text(app))
        await pilot.press("2")
        await wait_for(pilot, lambda: "must be divisible by" in screen_text(app))
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "marked above" not in text and "invalid: heads" in text, text
        assert "H heads 1" not in text and "H heads 4" in text, text  # the loaded config's, under "stale"
        assert "stale: form invalid" in text and "for gpt2-toy-english" in text, text
        await pilot.press("backspace", "backspace", "8")
        await wait_for(pilot, lambda: "H heads 8" in screen_text(app) and "stale" not in screen_text(app))
