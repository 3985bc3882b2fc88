"""What the crawler (tests/support/crawler.py) counts as a key named on the screen: a footer key only once the
footer drawn shows it, so a press is judged against the frame a person saw."""

from __future__ import annotations

from crawler import footer_shows

# The last row of the long tier's translator 80x24 walk at d10fea8 (seed 839854392) before `escape`: the
# Experiments list's footer, drawn before `i` moved the focus into the options field.
LIST_FOOTER = " r run/queue  f figure  f1 f2 f3 f4 f5 f6 f7 views  q quit          ▏^p palette "
FIELD_FOOTER = " f1 f2 f3 f4 f5 f6 f7 views  esc leave                              ▏^p palette "


def test_a_key_the_footer_drawn_does_not_show_is_not_named():
    assert not footer_shows(LIST_FOOTER, "esc")
    assert footer_shows(FIELD_FOOTER, "esc")


def test_the_footer_keys_are_read_whole():
    assert footer_shows(LIST_FOOTER, "r") and footer_shows(LIST_FOOTER, "q") and footer_shows(LIST_FOOTER, "^p")
    assert not footer_shows(LIST_FOOTER, "u") and not footer_shows(LIST_FOOTER, "^s")
    assert not footer_shows(LIST_FOOTER, "p")  # ^p is not p
