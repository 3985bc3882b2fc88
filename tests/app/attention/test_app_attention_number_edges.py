"""The attention grid with its weights written in the cells (`#`) keeps every number whole and clear of the pane's
edge, read off the screen at 80x24, on a random Hugging Face folder (issue 36's crawler, long tier, seed
385054740, `f t pagedown 2 end`: the last column's "0.05" sat against the grid's scrollbar, "0.05▅▅", where a
number cut short looks the same). The walk goes to the grid's last row and along to its last column."""

from __future__ import annotations

import random

from app_support import app_for, attention_grids, screen_lines, screen_text, wait_for
from hf_fixtures import save_hf_gpt2
from screen_rules import cut_numbers

from tui_lab.app.widgets.heatmap import Heatmap

SEED = 385054740  # the crawler's: its folder's shape drawn from it as tests/app/shell/test_crawl.py draws it


def crawled_folder(folder, seed: int) -> None:
    rng = random.Random(seed)
    heads = rng.choice([1, 2, 4])
    save_hf_gpt2(folder, seed=seed, n_layer=rng.randint(1, 3), n_head=heads, n_embd=heads * rng.choice([8, 16]),
                 n_positions=rng.choice([32, 64, 128]))


async def test_numbers_in_the_cells_never_touch_the_edge_of_the_grid_at_80x24(tmp_path):
    crawled_folder(tmp_path / "hf", SEED)
    app = app_for("--from-hf", str(tmp_path / "hf"))
    async with app.run_test(size=(80, 24)) as pilot:
        await attention_grids(pilot)
        heatmap = app.query_one("#att-map", Heatmap)
        await wait_for(pilot, lambda: heatmap.has_focus)
        rows, cols = heatmap.shape
        await pilot.press("number_sign", "end")
        await wait_for(pilot, lambda: heatmap.numbers)
        seen = []
        for key in ["down"] * rows + ["right"] * cols:
            await pilot.pause(0.05)
            lines = screen_lines(app)
            seen.append(lines)
            assert cut_numbers(lines[:-1], 80) == [], f"after # end and {len(seen) - 1} moves:\n" + "\n".join(lines)
            await pilot.press(key)
        assert heatmap.cursor == (rows - 1, cols - 1), screen_text(app)
        assert any(any(c.isdigit() for c in line[5:]) and "0." in line for line in seen[-1]), screen_text(app)
