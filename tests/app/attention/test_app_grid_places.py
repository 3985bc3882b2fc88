"""The grid, the model view (m) and the inside-one-head pane (c) share the Attention view's room: a seeded random
walk over the keys that move them (c, m, l, h, k) at 80x24 and 160x48, read after every key from the rendered
screen. The grid came back beside the model view on any redraw (`m l`), and `c m` at 80x24 drew the model view,
then the grid, as a box with no row inside it (a tmux walk found both)."""

from __future__ import annotations

import random

import pytest
from app_support import app_for, screen_lines, wait_for, wait_ready
from screen_rules import squeezed_boxes

from tui_lab.app.views.attention.draw import AttentionMap
from tui_lab.app.views.attention.inside_head import InsideHead
from tui_lab.app.views.attention.small_multiples import SmallMultiples

KEYS = ("c", "m", "l", "h", "k")
WALK = 24  # each defect it found took 2 to 8 keys


def _idle(app) -> bool:
    return not any(not w.is_finished for w in app.workers)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_random_walk_keeps_one_grid_in_its_place_and_no_empty_box(size):
    seed = random.randrange(1 << 20)
    rng = random.Random(seed)
    app = app_for()
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        await pilot.press("2")
        view = app.view("attention")
        await wait_for(pilot, lambda: view.is_mounted and view.grids and _idle(app), 60)
        grid, gallery, inside = (view.query_one(kind) for kind in (AttentionMap, SmallMultiples, InsideHead))
        walked: list[str] = []
        for _ in range(WALK):
            key = rng.choice(KEYS)
            walked.append(key)
            await pilot.press(key)
            await wait_for(pilot, lambda: _idle(app), 30)
            await pilot.pause()
            where = f"seed {seed}, keys {' '.join(walked)} at {size[0]}x{size[1]}"
            assert not (grid.display and gallery.display), where
            assert not (gallery.display and inside.display), where  # the pane explains a cell of the grid
            if size[1] < 30:  # short: the inside-head pane stands in the grid's place
                assert not (grid.display and inside.display), where
            assert grid.display or gallery.display or inside.display, where
            lines = screen_lines(app)
            assert squeezed_boxes(lines, least=1) == [], f"{where}\n" + "\n".join(lines)
