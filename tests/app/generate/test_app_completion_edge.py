"""The completion's text keeps one cell clear of its box's edge: a random model's sampled run with no space wrapped
at the edge, and a digit against the scrollbar read as a number it cut (the long tier's English 80x24 walk,
"…:/6▁▁"). Seeded runs of characters and digits, each long enough to scroll, at two sizes."""

from __future__ import annotations

import random

import pytest
from app_support import app_for, open_view, screen_lines
from screen_rules import cut_numbers

from tui_lab.app.views.generate.token_stream import Token, TokenStream


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_no_digit_of_the_completion_touches_its_edge(size):
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        await open_view(pilot, "generate", "5")
        await pilot.pause()
        stream = app.query_one(TokenStream)
        rng = random.Random(36)
        for _ in range(12):
            stream.start("In the morning")
            text = "In the morning"
            for i in range(300):
                piece = rng.choice("0123456789/:;!'.(&") if rng.random() < 0.9 else " "
                text += piece
                stream.add(Token(i, piece, 0.5), text)
            await pilot.pause()
            lines = screen_lines(app)
            assert cut_numbers(lines, size[0]) == [], "\n".join(lines)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_run_with_no_space_folds_with_the_mark(size):
    """A random model's run of characters with no space, wider than a line: each line it breaks at ends with the fold
    mark, as the compare boxes' do, and the lines read back to the text (Rich's wrap cut it with no mark)."""
    from tui_lab.app.widgets.model_text import FOLD

    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        await open_view(pilot, "generate", "5")
        stream = app.query_one(TokenStream)
        rng = random.Random(size[0])
        for _ in range(6):
            prompt, text = "The old king ", ""
            stream.start(prompt)
            for i in range(rng.randint(size[0], 2 * size[0])):
                text += rng.choice("abcdefghij0123456789/:;.,")
                stream.add(Token(i, text[-1], 0.5), text)
            await pilot.pause()
            r = stream.region
            lines = [line[r.x:r.right].rstrip() for line in screen_lines(app)[r.y:r.bottom]]
            assert len(lines) > 1 and all(line.endswith(FOLD) for line in lines[:-1]), "\n".join(lines)
            assert "".join(line.removesuffix(FOLD) for line in lines) == prompt + text, "\n".join(lines)
