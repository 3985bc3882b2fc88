"""The fixed inputs the views open on (the Tour, Attention, Generate): which shipped toys, which sentences,
which held-out number. No torch.

The number is held out of the numbers-de task (tests check it), so the cross-attention page shows the
toy generalising, not remembering: German says the units before the tens ("zwei und dreißig"), so the
row that writes 'zwei' has to look past 'thirty' to 'two'.
"""

from __future__ import annotations

from typing import Any

from tui_lab.shipped import shipped_meta

TOY_DE = "transformer-2017-toy-numbers-de"
TOY_EN = "gpt2-toy-english"
NUMBER = 432  # in numbers-de's held-out split
# Its words, written out because `tui_lab.data` imports torch and these are read on the UI thread; tests check
# them against tui_lab.data.numbers and the task's split.
NUMBER_WORDS = ("four hundred thirty two", "vier hundert zwei und dreißig")
SOURCE_TEXT = "I have seen the film today"  # a random-weight encoder-decoder's first source
ENGLISH_SENTENCE = "The streets were wet and empty."  # short: its grid fits at 80x24
# Seed 002's padding example: a batch of three sentences of 4, 3 and 1 tokens.
MASK_BATCH = (("我", "喜欢", "机器", "学习"), ("我", "喜欢", "NLP"), ("你好",))
SINE_ROWS = 20  # positions drawn in the sinusoidal heatmap


def numbers_pair() -> tuple[str, str]:
    """(English, German) words of the held-out number."""
    return NUMBER_WORDS


def previous_token_meta() -> dict[str, Any]:
    """Where meta.json says the English toy's previous-token head is, and its score over held-out text."""
    return shipped_meta(TOY_EN)["shipped"]["measured"]["previous_token_head"]


# A head earns the name "previous-token head" when it puts at least this mean weight on position i-1 over
# held-out text (Olsson et al.'s heads put most of it there). The shipped toy's best head scores 0.10: it
# leans on the previous token more than any other head, but it is not one, and the views say so.
PREVIOUS_TOKEN_HEAD = 0.5


def previous_token_name(meta: dict[str, Any]) -> str:
    """What the views call the English toy's most previous-looking head, by its measured score."""
    return "previous-token head" if meta["score"] >= PREVIOUS_TOKEN_HEAD else "most on the token before"
