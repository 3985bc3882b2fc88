"""Text a random model sampled, drawn in a box: a lone combining mark gets a base of its own (it drew over the
box's left border, the crawler's long tier on a Hugging Face folder at 160x48), controls show as escapes; folded to
the box's width one cell short of its border, a run with no space folding with a mark, never inside a number or an
escape that fits a line (the crawler: a sampled digit run cut against a compare column's border)."""

from __future__ import annotations

import random
import re
import unicodedata

from model_texts import sampled
from rich.cells import cell_len
from textual.content import Content

from tui_lab.app.widgets.model_text import FOLD, drawable, fold, fold_line


def test_a_lone_mark_gets_a_base_and_a_mark_on_a_letter_stays():
    assert drawable("\u0301abc") == "◌\u0301abc"
    assert drawable("x \u0308y\n\u0301") == "x ◌\u0308y\n◌\u0301"
    assert drawable("cafe\u0301") == "cafe\u0301"  # on its letter: as written


def test_controls_are_escaped_and_newlines_and_plain_text_kept():
    assert drawable("a\x1b[2Jb\rc") == "a\\x1b[2Jb\\rc"
    assert drawable("one\ntwo\tthree") == "one\ntwo    three"
    assert drawable("The old king ⭘ 世界 �") == "The old king ⭘ 世界 �"


def test_every_line_of_random_sampled_text_starts_on_a_cell_of_its_own():
    rng = random.Random(5)
    pool = [chr(c) for c in range(0x20, 0x3000) if unicodedata.category(chr(c)) != "Cs"] + ["\n", "\t", "\x00"]
    for _ in range(200):
        text = drawable("".join(rng.choice(pool) for _ in range(rng.randint(1, 40))))
        for line in text.split("\n"):
            if line:
                assert cell_len(line[0]) >= 1, repr(line)
                assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in line), repr(line)


# --- folding in a box (the compare and side-by-side boxes) --------------------------------------------------------
def test_folded_lines_keep_a_cell_clear_of_the_border_and_lose_nothing():
    for seed in range(6):
        rng = random.Random(seed)
        for _ in range(60):
            text, width = sampled(rng), rng.randint(6, 40)
            for line in text.split("\n"):
                folds = fold_line(line, width)
                rebuilt = line[:folds[0][0]]
                assert set(rebuilt) <= {" "}  # only leading spaces too wide for a line go
                for k, (start, end, folded) in enumerate(folds):
                    part = line[start:end]
                    assert cell_len(part) <= width - 1, (seed, width, part)  # the last cell stays clear
                    assert not part or cell_len(part[0]) > 0, (seed, part)  # no mark starts a line
                    gap = line[end:folds[k + 1][0]] if k + 1 < len(folds) else line[end:]
                    assert not folded or gap == "", (seed, part)  # a marked fold loses nothing
                    assert folded or set(gap) <= {" "}, (seed, part, gap)  # a plain break only at spaces
                    rebuilt += part + gap
                assert rebuilt == line


def test_a_fold_never_cuts_a_number_or_an_escape_that_fits_a_line():
    for seed in range(6):
        rng = random.Random(100 + seed)
        for _ in range(60):
            text, width = sampled(rng), rng.randint(8, 40)
            for line in text.split("\n"):
                for start, end, folded in fold_line(line, width)[:-1]:
                    if not folded:
                        continue
                    before, after = line[start:end], line[end:]
                    left, right = re.search(r"[0-9]*$", before).group(), re.match(r"[0-9]*", after).group()
                    if left and right:  # a number cut: only one wider than a line
                        assert len(left + right) > width - 1, (seed, width, before, after[:10])
                    tail = re.search(r"\\x[0-9a-f]?$|\\$", before)
                    assert not tail or re.match(r"\\x[0-9a-f]{2}", line[start:][tail.start():]) is None, before


def test_a_run_wider_than_the_box_folds_with_a_mark_and_words_wrap_at_spaces():
    assert [line for line in fold(Content("the quick brown fox"), 11).plain.split("\n")] == ["the quick", "brown fox"]
    assert fold(Content("h8d0aaa7a2g3a6h457h1h"), 18).plain == f"h8d0aaa7a2g3a6h{FOLD}\n457h1h"
    assert fold(Content("a\\x19b"), 5).plain == f"a{FOLD}\n\\x19{FOLD}\nb"  # the escape whole, on a line of its own
    assert fold(Content("1" * 20), 8).plain == f"1111111{FOLD}\n1111111{FOLD}\n111111"  # wider than a line: folded


async def test_a_box_draws_the_folds_and_copying_gives_the_text_without_their_marks():
    from app_support import screen_lines
    from textual.app import App, ComposeResult
    from textual.selection import Selection

    from tui_lab.app.widgets.model_text import ModelText

    class Box(App):
        CSS = "ModelText { width: 12; border: round white; }"

        def compose(self) -> ComposeResult:
            yield ModelText("ab x123456789y45 cd")

    app = Box()
    async with app.run_test(size=(30, 8)) as pilot:
        await pilot.pause()
        # the number whole on a line of its own, the run's folds marked, the last cell clear of the border
        assert [line[:12] for line in screen_lines(app)[1:4]] == ["│ab x↵     │", "│123456789↵│", "│y45 cd    │"]
        text, _ = app.query_one(ModelText).get_selection(Selection(None, None))
        assert text == "ab x123456789y45 cd"


async def test_a_box_grown_after_its_text_was_drawn_shows_every_line_of_it():
    """Both lines drawn once the box is two rows high, even when the lines were rendered while it was one row and
    the layout that grew it marked nothing to draw (the state is set by hand: Textual reaches it rarely, by the
    order of a worker's result, a render and a layout; the long tier saw the side by side's detail row blank)."""
    from app_support import screen_lines
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.geometry import Size
    from textual.widget import Widget

    from tui_lab.app.widgets.model_text import ModelText

    class Box(App):
        CSS = "ModelText { width: 1fr; }"

        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield ModelText("...")

    app = Box()
    async with app.run_test(size=(30, 6)) as pilot:
        await pilot.pause()
        text = app.query_one(ModelText)
        text.update(Content.from_markup("vier hundert\n[dim]6 decoder passes[/]"))
        text._render_content()  # rendered at the height it had (one row): one line
        assert text.size.height == 1 and len(text._render_cache.lines) == 1
        # the size the layout will give, already the widget's own (as from its last layout, before its panel was
        # hidden): the layout finds no resize to mark it dirty
        grown = Size(text.size.width, 2)
        text._size = grown
        text.set_reactive(Widget.virtual_size, grown)
        await pilot.pause()
        assert text.size.height == 2
        assert [line.rstrip() for line in screen_lines(app)[:2]] == ["vier hundert", "6 decoder passes"]
