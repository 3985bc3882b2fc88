"""Generate's seed (issue 36 item 17): sampling drew the same text on every `g` (seed 0 always), and the compare
panel's top-k and top-p boxes read the same text. Now a blank seed field draws a new seed each press and the
completion names it; a typed seed reproduces the text; top-k and top-p draw with seeds of their own."""

from __future__ import annotations

import re

from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from textual.widgets import Input

SEED = re.compile(r"seed (\d+)")


def box_text(app, column: int = 0) -> str:
    """The text inside the `column`-th bordered box of each screen row, joined with spaces (wrapped words and
    numbers read whole again)."""
    parts = []
    for line in screen_lines(app):
        cells = line.split("│")
        if len(cells) > 2 * column + 1:
            parts.append(cells[2 * column + 1].strip())
    return " ".join(p for p in parts if p)


async def pressed_g(pilot, view) -> str:
    """Press g with focus on the completion; the completion box's text once the run is done."""
    view.home().focus()
    await pilot.press("g")
    await pilot.pause(0.3)
    await wait_for(pilot, lambda: not view.running)
    await pilot.pause(0.3)
    return box_text(pilot.app)


def words(text: str) -> str:
    """The completion without its status line (its time differs between two runs of the same draw)."""
    return text.split(" tokens in ")[0]


async def test_blank_seed_draws_anew_each_press_and_a_typed_seed_reproduces():
    app = app_for()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        view = await view_mounted(pilot, "generate")
        app.query_one("#gen-max_new_tokens", Input).value = "24"
        assert app.query_one("#gen-seed", Input).value == ""  # blank by default: each press draws
        first, second = await pressed_g(pilot, view), await pressed_g(pilot, view)
        seeds = [SEED.search(text) for text in (first, second)]
        assert all(seeds), f"no seed named under the completion:\n{first}"
        assert "drawn" in first and seeds[0].group(1) != seeds[1].group(1)
        app.query_one("#gen-seed", Input).value = seeds[0].group(1)  # a draw worth keeping, typed back in
        again = await pressed_g(pilot, view)
        assert f"seed {seeds[0].group(1)}" in again and "drawn" not in again
        assert words(again) == words(first)


async def test_the_settings_row_keeps_the_seed_at_80_columns_and_compare_boxes_draw_their_own():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        view = await view_mounted(pilot, "generate")
        await pilot.pause(0.5)
        row = next(line for line in screen_lines(app) if "temp" in line and "top-k" in line)
        assert "seed" in row and "cache" in row and "max 48" in row, row
        app.query_one("#gen-seed", Input).value = "7"
        app.query_one("#gen-max_new_tokens", Input).value = "12"
        view.home().focus()
        await pilot.press("m")
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause(0.3)
        top_k, top_p = box_text(app, 1), box_text(app, 2)
        assert "seed 7" in top_k and "seed 8" in top_p, "\n".join(screen_lines(app))
