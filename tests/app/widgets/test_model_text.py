"""Text a random model sampled, drawn in a box: a lone combining mark gets a base of its own (it drew over the
box's left border, the crawler's long tier on a Hugging Face folder at 160x48), controls show as escapes."""

from __future__ import annotations

import random
import unicodedata

from rich.cells import cell_len

from tui_lab.app.widgets.model_text import drawable


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
