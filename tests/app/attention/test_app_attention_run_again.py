"""Attention `r` (named by the "Run r" button) on the text whose grids are on screen answers at once, on the
screen: it captured the same grids again and said nothing, a dead press (issue 36's crawler). On new text it
captures, as before."""

from __future__ import annotations

import pytest
from app_support import app_for, attention_grids, screen_text, wait_for
from textual.widgets import Input

SAID = "the grids shown are this text's already"


async def _opened(pilot):
    """The view with the live model's grids drawn and no capture under way."""
    attention = await attention_grids(pilot)
    await wait_for(pilot, lambda: not any(w.group == "attention" and not w.is_finished for w in attention.workers))
    return attention


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_r_on_the_text_shown_says_so_and_on_new_text_captures(size):
    app = app_for()
    async with app.run_test(size=size) as pilot:
        attention = await _opened(pilot)
        await pilot.pause(0.3)
        assert "Run r" in screen_text(app)
        await pilot.press("r")
        await wait_for(pilot, lambda: SAID in screen_text(app), 10)

        app.query_one("#att-src", Input).value = "the cat sat on the mat"
        await pilot.press("r")
        await wait_for(pilot, lambda: attention.src[:3] != [] and "mat" in "".join(attention.src), 60)
        assert "sat" in screen_text(app)  # the new text's grid is drawn


async def test_r_that_captures_the_grids_already_drawn_says_so():
    """Whatever lost the view's record of the grids on screen (the long tier's walk found r with the inside-head pane
    open on a mask changing nothing, its path not replayed), r's capture of the same text on the same model ends
    saying so, not on the screen it started from."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        attention = await _opened(pilot)
        attention.runs.drawn.forget()
        await pilot.press("r")
        await wait_for(pilot, lambda: SAID in screen_text(app), 30)


async def test_r_on_new_text_under_a_grid_the_text_does_not_change_says_so():
    """Over the positions table (or a mask of as many tokens) new text draws the same grid: r captured it and the
    screen stood still (the CI tier's walk, seed 11: text "14" over a checkpoint's positions table)."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        attention = await _opened(pilot)
        attention.pickers.select_kind(next(kind for kind in attention.kinds() if kind.startswith("pos")))
        await pilot.pause(0.3)
        app.query_one("#att-src", Input).value = "a new sentence"
        await pilot.press("r")
        await wait_for(pilot, lambda: "does not use it" in screen_text(app), 30)
        assert "new" in "".join(attention.src)  # captured all the same: k shows the new text's attention
        # New text again: the same answer would redraw the line it replaces, and the press showed nothing
        # (the long tier's HF 80x24 walk, over a mask); said again, it is a message too.
        notes = len(app._notifications)
        app.query_one("#att-src", Input).value = "another new sentence"
        await pilot.press("r")
        await wait_for(pilot, lambda: "another" in "".join(attention.src), 30)
        await pilot.pause(0.3)
        said = [n.message for n in list(app._notifications)[notes:]]
        assert any("does not use it" in text for text in said), said


async def test_r_on_new_text_under_a_pane_the_text_does_not_change_says_so():
    """Inside one head open on the mean of heads stands in the grid's place at 80x24 and narrower: new text of as
    many tokens redrew the grid under it, while the screen (the pane's "pick one head", a title cut before its
    numbers) stood still and nothing was said (the long tier's HF 80x24 walk). What the view shows is compared."""
    app = app_for()
    async with app.run_test(size=(64, 24)) as pilot:
        attention = await _opened(pilot)
        while attention.choice()[2] >= 0:  # the head picker to "mean of heads"
            await pilot.press("h")
        await pilot.press("c")
        await wait_for(pilot, lambda: "pick one head" in screen_text(app), 10)
        app.query_one("#att-src", Input).value = "The streets were empty and wet."  # the 7 tokens, reordered
        attention.home().focus()
        await pilot.pause(0.3)
        await pilot.press("r")
        await wait_for(pilot, lambda: "the pane over the grid does not change" in attention.info_text(), 30)
        await pilot.pause(0.2)
        assert "r: captured the new text" in screen_text(app)  # drawn
        assert "empty" in attention.src[3]  # captured all the same: c shows the new text's grid


def test_each_answer_fits_the_info_line_at_80_columns():
    """r's answers are one row at 80 columns (the info line's 76 inside its padding): on two rows the long tier
    read one cut after "with", drawn before the line took its new height."""
    from tui_lab.app.views.attention import capture_runs

    answers = [value for name, value in vars(capture_runs).items() if name.isupper() and isinstance(value, str)]
    assert len(answers) == 3
    assert all(len(text) <= 76 for text in answers), [(len(text), text) for text in answers]
