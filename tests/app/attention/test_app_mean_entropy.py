"""The "mean of heads" grid's title gives the entropy of the grid it shows, read from the rendered screen (issue
36 item 12: it said 0.09 nats, the heads' mean entropy, over rows near 1.1 nats)."""

from __future__ import annotations

import math
import re

from app_support import app_for, screen_text, wait_for, wait_ready
from textual.widgets import Select

from tui_lab.app.views.attention.grids import mean_of_heads
from tui_lab.app.widgets.heatmap import Heatmap

ENTROPY = re.compile(r"mean of heads · \d+ x \d+ · entropy (\d+\.\d\d) nats")


def row_entropy(rows: list[list[float]]) -> float:
    return sum(-sum(p * math.log(p) for p in row if p > 0) for row in rows) / len(rows)


async def test_the_mean_of_heads_title_gives_the_shown_grids_entropy():
    app = app_for()  # the shipped English toy: its heads differ, so the two numbers part
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        view = app.view("attention")
        await wait_for(pilot, lambda: view.grids and "entropy" in screen_text(app))
        app.query_one("#att-head", Select).value = -1  # the mean of heads (the toy opens on a head)
        await wait_for(pilot, lambda: ENTROPY.search(screen_text(app)))
        shown = float(ENTROPY.search(screen_text(app))[1])
        grid = app.query_one(Heatmap).values
        assert abs(shown - row_entropy(grid)) < 0.006, (shown, row_entropy(grid))
        heads = view.grids[("decoder-self", 0)]
        assert grid == mean_of_heads(heads)  # the title's layer 0, the default
        heads_mean = sum(row_entropy(h) for h in heads) / len(heads)
        assert abs(shown - heads_mean) > 0.01, (shown, heads_mean)  # not the heads' mean entropy
