"""Text like a random model's, drawn from a seed (no tests here): what the Generate view's compare and side-by-side
boxes must show whole (tests/app/widgets/test_model_text.py, tests/app/generate/test_app_generate_fold.py)."""

from __future__ import annotations

import random

from tui_lab.app.widgets.model_text import drawable

POOL = ([chr(c) for c in range(0x21, 0x7F)] + [chr(c) for c in range(0xA1, 0x180)] + ["\ufffd", "\xa0"]
        + [chr(c) for c in range(0x300, 0x370)] + list("日本語のテキスト🙂") + ["\x13", "\x0e", "\x7f"])


def sampled(rng: random.Random) -> str:
    """Words, runs of digits, and runs with no space wider than any box (escapes, marks on letters, wide
    characters, no-break spaces), drawn safe as the boxes draw it (`drawable`)."""
    parts = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(["word", "digits", "run", "run"])
        if kind == "word":
            parts.append("".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 9))))
        elif kind == "digits":
            parts.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30))))
        else:
            parts.append("".join(rng.choice(POOL + list("0123456789") * 4) for _ in range(rng.randint(10, 90))))
    return drawable(rng.choice([" ", "", "\n"]).join(parts))
