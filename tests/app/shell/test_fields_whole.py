"""Every fixed-width field on every view takes only what it shows whole (the long tier typed 57745774 into the
Speed view's 6-cell repeats field and it read "…"; issue 36). No field is listed: each one a view draws is typed
past its width at 80x24 and 160x48, left, and read from the screen with the field-value rule."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, view_mounted, wait_ready
from screen_rules import input_values
from textual.css.scalar import Unit

from tui_lab.app.widgets.field_input import FieldInput


def fixed_fields(app) -> list[FieldInput]:
    """The fields drawn now whose width is a count of cells (a `1fr` field grows with the screen)."""
    return [field for field in app.screen.query(FieldInput)
            if field.region.area and field.styles.width is not None and field.styles.width.unit == Unit.CELLS]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_no_fixed_width_field_takes_more_than_it_shows(size):
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        seen = []
        for view in app.views():
            await view_mounted(pilot, view.id.removeprefix("view-"))
            app.show_view(view.id.removeprefix("view-"))
            await pilot.pause()
            for field in fixed_fields(app):
                field.focus()
                field.value = ""
                await pilot.press(*"8" * (field.content_region.width + 4))
                app.set_focus(None)
                await pilot.pause()
                seen.append(field.id)
                found = [line for line in input_values(app, screen_lines(app)) if f"#{field.id}" in line]
                assert not found, (view.id, found)
        assert {"sp-prompt", "sp-repeats", "gen-max_new_tokens", "shape-batch"} <= set(seen), seen
