"""The Attention view's head detectors (j), read from the rendered screen: a row per head with the previous-token,
duplicate-token and induction scores `head_scores` gives on the live model, sorted by a key or a click on a
column's header, Enter opening that head's grid; on a model they do not cover, j is off the footer and says why."""

from __future__ import annotations

import re

import pytest
from app_support import app_for, attention_grids, screen_lines, screen_text, wait_for, wait_ready

from tui_lab.mechanism.head_detectors import SCORES, default_seq_len, head_scores

ROW = re.compile(r"^\s*(L(\d+)H(\d+))\s+(\d\.\d{3})\s+(\d\.\d{3})\s+(\d\.\d{3})(?=\s|$)")


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")  # no thread-count measurement inside a test


def table_rows(app) -> list[tuple[str, ...]]:
    """The table's rows on screen, top to bottom: (head, previous, duplicate, induction) as drawn."""
    rows = []
    for line in screen_lines(app):
        m = ROW.match(line)
        if m:
            rows.append((m[1], m[4], m[5], m[6]))
    return rows


def expected_rows(app) -> dict[str, tuple[str, ...]]:
    """What the core says for each head of the live model, as the table writes it (3 decimals)."""
    model = app.live.model
    heads = head_scores(model, default_seq_len(model.config)).to_dict()["heads"]
    return {f"L{r['layer']}H{r['head']}": (f"L{r['layer']}H{r['head']}", *(f"{r[n]:.3f}" for n in SCORES))
            for r in heads}


def header_line(app) -> tuple[int, str]:
    return next((y, line) for y, line in enumerate(screen_lines(app)) if "previous token" in line and "induction"
                in line)


async def open_detectors(pilot, size_rows: int) -> None:
    """j, named on the footer where it has room (or else on the hint line above it), opens the table."""
    app = pilot.app
    await wait_ready(pilot)
    app.show_view("attention")
    wide = app.size.width >= 100
    await wait_for(pilot, lambda: "j jobs" in screen_lines(app)[-2] and "q quit" in screen_lines(app)[-1]
                   if not wide else "j head jobs" in screen_lines(app)[-1])
    await pilot.press("j")
    await wait_for(pilot, lambda: len(table_rows(app)) >= size_rows, 60)


async def test_every_head_with_the_cores_scores_sorted_by_a_header_click_at_160x48():
    app = app_for()  # the shipped English toy: its heads score apart (random weights tie at 3 decimals)
    async with app.run_test(size=(160, 48)) as pilot:
        config = app.live.config
        heads = config.layers * config.heads
        await open_detectors(pilot, heads)
        expected = expected_rows(app)
        assert table_rows(app) == [expected[f"L{layer}H{h}"] for layer in range(config.layers)
                                   for h in range(config.heads)]
        y, line = header_line(app)
        await pilot.click(offset=(line.index("induction") + 2, y))  # the column's header
        await wait_for(pilot, lambda: "induction ▼" in header_line(app)[1])
        rows = table_rows(app)
        assert sorted(rows) == sorted(expected.values())  # every head still there, each with its own scores
        scores = [float(r[3]) for r in rows]
        assert scores == sorted(scores, reverse=True) and rows != [expected[k] for k in expected]


async def test_sort_keys_and_enter_opening_the_head_at_80x24():
    app = app_for()  # the shipped English toy: its heads score apart (random weights tie at 3 decimals)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detectors(pilot, 5)
        expected = expected_rows(app)
        shown = table_rows(app)
        assert shown == list(expected.values())[:len(shown)]  # by layer and head; the rest scroll
        best = {}
        titles = ("previous token ▼", "duplicate token ▼", "induction ▼")
        for name, column, title in zip(SCORES, (1, 2, 3), titles, strict=True):
            await pilot.press("s")  # layer -> previous -> duplicate -> induction
            await wait_for(pilot, lambda title=title: title in header_line(app)[1])
            rows = table_rows(app)
            values = [float(r[column]) for r in rows]
            assert values == sorted(values, reverse=True), name
            assert values[0] == max(float(r[column]) for r in expected.values())  # the top row heads the column
            assert all(r == expected[r[0]] for r in rows)
            best[name] = rows[0][0]
        for line in screen_lines(app):  # numbers whole, left of the table's scrollbar (the last 2 of 78 columns)
            m = ROW.match(line)
            if m:
                assert m.end(6) <= 80 - 4, line
        top = re.match(r"L(\d+)H(\d+)", best["induction"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: not table_rows(app))
        assert f"layer {top[1]} · head {top[2]} ·" in screen_text(app)  # the grid's title: that head
        await pilot.press("j")
        await wait_for(pilot, lambda: len(table_rows(app)) >= 5, 60)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not table_rows(app) and "query [" in screen_text(app))


async def test_a_model_the_detectors_do_not_cover_says_so_in_one_line():
    app = app_for("--preset", "bert-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await wait_for(pilot, lambda: "k grid" in screen_lines(app)[-1] and "c inside" in screen_text(app))
        assert "jobs" not in screen_text(app)  # named neither on the footer nor on the hint line
        assert "DLA" not in screen_text(app) and "ablate" not in screen_text(app)  # nor a and d (issue 36 item 11)
        await pilot.press("j")
        await wait_for(pilot, lambda: "head detectors need a decoder-only" in screen_text(app))
        assert not table_rows(app)


async def test_over_the_table_the_hint_line_names_only_keys_that_act():
    """With the detectors' table in the grids' place the hint line under it named the grid's `# values` and
    `z dense`: the grid is away and the table takes neither, so both did nothing. Every key the line names is bound
    where the focus is; Escape brings the grid and its keys back, and `a` (its grid takes them) too."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await attention_grids(pilot)

        def hint_keys() -> list[str]:
            line = next(line for line in screen_lines(app)[::-1] if " · " in line and "JSON" in line)
            return [part.split()[0] for part in line.strip().split(" · ")]

        await pilot.press("j")
        await wait_for(pilot, lambda: len(table_rows(app)) >= 4 and "#" not in hint_keys(), 60)
        keys = hint_keys()
        assert "z" not in keys and {"m", "c", "a", "e"} <= set(keys)
        named = {"#": "number_sign"}
        assert all(named.get(key, key) in app.active_bindings for key in keys), (keys, list(app.active_bindings))
        await pilot.press("escape")
        await wait_for(pilot, lambda: {"#", "z"} <= set(hint_keys()), 10)
        await pilot.press("j")
        await wait_for(pilot, lambda: "#" not in hint_keys(), 10)
        await pilot.press("a")  # the ablation grid in the table's place: # and z are its
        await wait_for(pilot, lambda: {"#", "z"} <= set(hint_keys()), 30)
        assert "number_sign" in app.active_bindings and "z" in app.active_bindings
