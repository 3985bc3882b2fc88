"""Generate's completion as a person sees it (the SVG export, read back into cells): the prompt then the
new tokens as one text, each shaded by its probability with a legend, the cursor token's top-5, the on/off
checkboxes, and the grid's room at 80x24 while the compare panel stays hidden."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from app_support import app_for, view_mounted, wait_for, wait_ready
from screen_reader import Screen, find_columns, find_rows, read_svg
from textual.widgets import Input

from tui_lab.app.views.generate.token_stream import LEGEND_STOPS, Token, TokenStream, describe
from tui_lab.app.widgets.heatmap import Heatmap

SIZES = [(80, 24), (120, 40)]
CANDIDATE = re.compile(r"(\S+) (\d\.\d{3})")


async def generated(pilot, prompt: str, **fields: str):
    """The Generate view after one run of `prompt` with `fields`, and the rendered screen."""
    app = pilot.app
    await wait_ready(pilot)
    app.show_view("generate")
    await pilot.pause()
    view = app.view("generate")
    for name, value in {"prompt": prompt, **fields}.items():
        app.query_one(f"#gen-{name}", Input).value = value
    view.action_generate()
    await wait_for(pilot, lambda: not view.running)
    await pilot.pause()
    return view


def shot(app) -> Screen:
    return read_svg(app.export_screenshot(), *app.size)


def completion_cells(screen: Screen, prompt: str) -> list[tuple[int, int]]:
    """(y, x) of every non-blank character of the completion box's text, in reading order: from the line the
    prompt starts on, between the box's borders, up to the summary line ("N tokens in ...")."""
    for y in range(screen.height):
        x = screen.line(y).find("│" + prompt[:4])
        if x >= 0:
            break
    else:
        raise AssertionError("the prompt is not on screen:\n" + screen.text())
    left, right = x + 1, screen.line(y).index("│", x + 1)
    cells = []
    for yy in range(y, screen.height):
        if " tokens in " in screen.line(yy)[left:right]:
            return cells
        cells += [(yy, xx) for xx in range(left, right) if screen.chars[yy][xx].strip()]
    raise AssertionError("no summary line under the completion:\n" + screen.text())


def luminance(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def box_lines(screen: Screen, marker: str) -> list[str]:
    """The completion box's lines from the one holding `marker` to the box's bottom, inside its borders."""
    y = next(y for y in range(screen.height) if marker in screen.line(y))
    left = screen.line(y).rfind("│", 0, screen.line(y).index(marker)) + 1
    right = screen.line(y).index("│", left)
    lines = []
    while not screen.line(y)[left - 1:left].startswith("╰"):
        lines.append(screen.line(y)[left:right].rstrip())
        y += 1
    return lines


@pytest.mark.parametrize("size", SIZES)
async def test_the_completion_reads_as_the_prompt_then_each_token_shaded_and_the_cursor_token_shows_its_top_five(size):
    """One app per size (its boot paid once): a sampled completion read shaded, then a greedy one read token by
    token."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        # T 0.1 on the seeded toy, seed 0, picks some tokens at p > 0.5 and some below 0.1 (checked below)
        view = await generated(pilot, "hello", max_new_tokens="12", temperature="0.1", seed="0")
        stream = app.query_one(TokenStream)
        plain = shot(app)
        await pilot.press("tab", "y")  # out of the prompt (letters there are text), then shade on
        screen = shot(app)
        # the same text both ways, with no number between tokens: the prompt, then the decoded completion
        want = [(ch, None) for ch in stream.prompt if ch.strip()]
        for i in range(len(stream.tokens)):
            start, end = stream.span(i)
            want += [(ch, i) for ch in stream.text[start:end] if ch.strip()]
        for seen in (plain, screen):
            cells = completion_cells(seen, "hello")
            assert "".join(seen.chars[y][x] for y, x in cells) == "".join(ch for ch, _ in want), seen.text()
        shade: dict[int, set[str]] = {}
        for (y, x), (_, i) in zip(completion_cells(screen, "hello"), want, strict=True):
            if i is not None:
                shade.setdefault(i, set()).add(screen.bg[y][x])
        assert all(len(colours) == 1 for colours in shade.values()), shade  # one shade per token
        probs = {i: stream.tokens[i].prob for i in shade}
        high = [i for i, p in probs.items() if p > 0.5]
        low = [i for i, p in probs.items() if p < 0.1]
        assert high and low, probs
        colour = {i: next(iter(c)) for i, c in shade.items()}
        assert {colour[i] for i in high}.isdisjoint(colour[i] for i in low)
        ranked = sorted(shade, key=probs.__getitem__)
        assert all(luminance(colour[a]) <= luminance(colour[b]) + 1 for a, b in pairwise(ranked))
        # the legend: one swatch per stop, its value on it, brighter as p grows, bracketing every token's shade
        y = next(y for y in range(screen.height) if "p  0  .25  .5  .75  1" in screen.line(y))
        x = screen.line(y).index("p  0  .25")
        swatch = {p: screen.bg[y][screen.line(y).index(f" {p:g} ".replace("0.", "."), x) + 1] for p in LEGEND_STOPS}
        levels = [luminance(swatch[p]) for p in LEGEND_STOPS]
        assert levels == sorted(levels) and len(set(levels)) == len(levels)
        for i, p in probs.items():
            lo = max(s for s in LEGEND_STOPS if s <= p)
            hi = min(s for s in LEGEND_STOPS if s >= p)
            assert luminance(swatch[lo]) - 1 <= luminance(colour[i]) <= luminance(swatch[hi]) + 1, (p, colour[i])
        assert not view.query_one("#gen-compare").display
        # a greedy run of another prompt in the same view, shading off again: the cursor token's top five
        await pilot.press("y")
        await generated(pilot, "the cat", max_new_tokens="8", temperature="0")
        stream = app.query_one(TokenStream)
        await pilot.press("down", "home", "right", "right")  # into the completion, then the third token
        assert app.focused is stream and stream.cursor == 2
        await pilot.pause()
        lines = box_lines(shot(app), "token 3/8: ")
        chosen, p = re.search(r"token 3/8: (\S+)  p (\d\.\d{3})", lines[0]).groups()
        found = CANDIDATE.findall(" ".join(lines[1:]).split(":", 1)[1])
        assert len(found) == 5, lines
        probs = [float(q) for _, q in found]
        assert probs == sorted(probs, reverse=True) and sum(probs) <= 1, found
        assert found[0] == (chosen, p)  # greedy: the chosen token is the likeliest of its step
        # hovering a generated character moves the cursor there
        screen = shot(app)
        cells = completion_cells(screen, "the cat")
        start, end = stream.span(0)
        first = next(i for i, ch in enumerate(stream.text[start:end]) if ch.strip())
        y, x = cells[sum(1 for ch in "the cat" if ch.strip()) + first]
        await pilot.hover(offset=(x, y))
        await pilot.pause()
        assert stream.cursor == 0 and box_lines(shot(app), "token 1/8: ")


@pytest.mark.parametrize("family_preset, rows", [("transformer-2017-toy", 8), ("gpt2-toy", 8)])
async def test_the_grid_gets_the_room_at_80x24_until_compare_is_asked_for(family_preset, rows):
    app = app_for("--preset", family_preset)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await generated(pilot, "abcd", max_new_tokens=str(rows), temperature="0")
        heatmap = app.query_one("#gen-att", Heatmap)
        screen = shot(app)
        cols = find_columns(screen, heatmap.col_labels)
        assert cols is not None, screen.text()
        ys = find_rows(screen, heatmap.row_labels, cols.x0, cols.y + 1)
        assert sum(y >= 0 for y in ys) > 2, screen.text()
        await pilot.press("tab", "m")
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        assert view.query_one("#gen-compare").display and "greedy" in shot(app).text()
        await pilot.press("g")  # a single stream again: the compare panel steps aside
        await wait_for(pilot, lambda: not view.running)
        assert not view.query_one("#gen-compare").display


async def test_the_checkboxes_say_on_and_off():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await view_mounted(pilot, "generate")
        app.show_view("generate")
        await pilot.pause()
        text = shot(app).text()
        assert "▐✔▌ cache" in text and "▐ ▌ probs y" in text, text
        await pilot.press("tab", "y")
        app.query_one("#gen-cache").value = False
        await pilot.pause()
        text = shot(app).text()
        assert "▐ ▌ cache" in text and "▐✔▌ probs y" in text, text


def test_the_read_out_says_when_the_candidates_are_after_a_top_k_or_top_p_cut():
    stream = TokenStream()
    stream.start("ab")
    stream.add(Token(7, "c", 0.2, ((7, "c", 0.5), (8, "d", 0.5))), "c")
    cut = describe(stream, "T 1, top-k 2", cut=True).plain
    assert "p 0.200 before top-k/top-p" in cut and "top-2 (T 1, top-k 2): c 0.500 d 0.500" in cut
    assert "before" not in describe(stream, "T 1").plain
    stream.add(Token(9, "e", None), "ce")  # beam search: no probability, no candidates
    assert describe(stream, "beam search").plain == "newest token: e  beam search: no per-token probability"
