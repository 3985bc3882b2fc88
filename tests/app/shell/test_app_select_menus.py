"""Every select menu of every view, opened at 80x24, is framed (read from the rendered screen): a compact select's
menu had no frame, and its options over the fields below read as their values ("steps char", "batch bpe": the
crawler's long tier, seed 23). The selects are found, not listed: a new view's or panel's select is covered too."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from screen_rules import columns, input_values, open_menus, shown_widgets
from textual.widgets import Select

from tui_lab.app.app import VIEWS

FRAME_LEFT, FRAME_RIGHT = "▊", "▎"


async def test_every_views_select_menu_is_framed_and_hides_no_field_unmarked_at_80x24():
    app = app_for()
    opened: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        for view_id in [spec.id for spec in VIEWS]:
            app.show_view(view_id)  # mounts it now if the background has not yet
            await view_mounted(pilot, view_id)
            await wait_for(pilot, lambda view_id=view_id: app.view(view_id).display, 10)
            await pilot.pause()
            for select in [s for s in shown_widgets(app, Select) if not s.disabled]:
                select.focus()
                await pilot.press("enter")
                await wait_for(pilot, lambda select=select: select.expanded, 10)
                await pilot.pause()  # the menu drawn
                lines = screen_lines(app)
                (menu,) = open_menus(app)
                inside = range(menu.y + 1, min(menu.bottom, len(lines)) - 1)
                assert inside, (view_id, select.id, menu)
                for y in inside:
                    row = columns(lines[y], menu.x, menu.right)
                    assert row.startswith(FRAME_LEFT) and row.rstrip().endswith(FRAME_RIGHT), \
                        (view_id, select.id, "\n".join(lines))
                assert input_values(app, lines) == [], (view_id, select.id)
                opened.append(f"{view_id}#{select.id}")
                await pilot.press("escape")
                await wait_for(pilot, lambda select=select: not select.expanded, 10)
    print("menus opened:", opened)
    assert len(opened) >= 5, opened  # Train's four, Attention's kind at least
