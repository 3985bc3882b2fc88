"""The footer while a field types every letter, read from the rendered screen at 80x24: `q quit` is gone (q
types), so the footer names the way back, `esc leave`; a Select (q does not type) keeps `q quit` and no Esc
(the crawler, issue 36: the Architecture form's number fields dropped `q quit` with nothing in its place)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_ready


async def test_a_text_field_names_esc_and_esc_brings_q_quit_back():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("1")
        await view_mounted(pilot, "architecture")
        app.query_one("#f-d_model").focus()
        await pilot.pause()
        footer = screen_lines(app)[-1]
        assert "esc leave" in footer and "q quit" not in footer, footer
        await pilot.press("escape")
        await pilot.pause()
        footer = screen_lines(app)[-1]
        assert "q quit" in footer and "esc leave" not in footer, footer


async def test_a_select_keeps_q_quit_and_names_no_esc():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("1")
        await view_mounted(pilot, "architecture")
        app.query_one("#f-norm").focus()
        await pilot.pause()
        footer = screen_lines(app)[-1]
        assert "q quit" in footer and "esc leave" not in footer, footer
