"""Generate's attention grid as a person sees it (SVG export): one row per new token, labelled, every
cell under its context column, and the keys a row could not see hatched."""

from __future__ import annotations

import re

import pytest
from app_support import app_for, wait_for, wait_ready
from screen_reader import find_columns, find_rows, read_svg, slot_colours
from textual.widgets import Input

from tui_lab.app.widgets.heatmap import Heatmap


# One app and one generation for the three sizes, reached by resizing: the grid is laid out and drawn again.
async def test_generate_grid_rows_are_new_tokens_over_the_whole_context():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "abcd"), ("max_new_tokens", "4"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.shape == (4, 4)  # cross-attention: 4 new tokens x the 4 source bytes
        for size in ((80, 24), (120, 40), (200, 60)):
            if size != tuple(app.size):
                await pilot.resize_terminal(*size)
                await pilot.pause()
            shot = read_svg(app.export_screenshot(), *size)
            cols = find_columns(shot, heatmap.col_labels)
            assert cols is not None, f"{size}\n{shot.text()}"
            ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
            assert ys[0] >= 0, f"{size}\n{shot.text()}"
            for y in (y for y in ys if y >= 0):
                for j, colours in enumerate(slot_colours(shot, y, cols, 4)):
                    assert len(colours) == 1 and colours != {shot.base}, (size, y, j, colours, shot.text())


async def test_decoder_only_rows_hatch_the_keys_not_yet_generated():
    size = (160, 48)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "abc"), ("max_new_tokens", "4"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.shape == (4, 3 + 4) and heatmap.col_labels[:3] == ["a", "b", "c"]
        shot = read_svg(app.export_screenshot(), *size)
        cols = find_columns(shot, heatmap.col_labels)
        assert cols is not None, shot.text()
        ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
        for i, y in enumerate(ys):
            for j in range(7):
                cell = "".join(shot.chars[y][cols.x0 + j * cols.slot:cols.x0 + (j + 1) * cols.slot])
                assert ("╱" in cell) == (j >= 3 + i), (i, j, cell, shot.text())


RULER = re.compile(r"\b0    5    10   15")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_long_context_numbers_its_columns_with_a_key_and_labels_every_row(size):
    """48 tokens after a 7-token prompt: 55 columns too narrow for their labels across. A ruler numbers
    them over their cells, key lines map each number to its token, and each row has its own line and label
    (the grid was two rows per line, every second labelled, under vertical letter stacks)."""
    app = app_for()  # the shipped toy: word tokens
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        prompt = "In the morning, Anna walked to"
        for name, value in (("prompt", prompt), ("max_new_tokens", "48"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        rows, cols = heatmap.shape
        prompt_len = cols - rows
        assert rows == 48 and prompt_len == 7
        shot = read_svg(app.export_screenshot(), *size)
        box = heatmap.content_region
        lines = [shot.line(y)[box.x:box.right] for y in range(box.y, box.bottom)]
        ruler_y = next((i for i, line in enumerate(lines) if RULER.search(line)), None)
        assert ruler_y is not None, shot.text()
        x0 = box.x + RULER.search(lines[ruler_y]).start()
        # the key: "0 In  1 ␣the  2 ␣morning ...", every entry its column's number and token, in order
        first_row = find_rows(shot, heatmap.row_labels[:1], x0, box.y + ruler_y + 1)[0]
        key = " ".join(lines[ruler_y + 1:first_row - box.y])
        entries = re.findall(r"(\d+) (\S+)", key)
        assert entries == [(str(j), heatmap.col_labels[j]) for j in range(len(entries))], key
        assert len(entries) == cols or key.rstrip().endswith("…"), key
        assert len(entries) >= prompt_len, key  # at least the prompt's tokens are named
        # every row on its own line, labelled; the ruler's column j is the cell under it
        ys = find_rows(shot, heatmap.row_labels, x0, box.y + ruler_y + 1)
        shown = [y for y in ys if y >= 0]
        assert len(shown) >= 5 and shown == list(range(ys[0], ys[0] + len(shown))), (ys, shot.text())
        for i, y in enumerate(shown):
            assert shot.painted(y, x0 + 1) and not shot.painted(y, x0 - 1), (i, shot.line(y))
            seen = prompt_len + i  # the keys row i saw: the prompt and the tokens before it
            if x0 + seen < box.right - 2:
                assert shot.chars[y][x0 + seen] == "╱" and shot.chars[y][x0 + seen - 1] != "╱", (i, shot.line(y))
