"""Esc and the key after it, read from the terminal in one go, are Esc and that key (app/textual_private.py)."""

from __future__ import annotations

import time

import pytest

from tui_lab.app.textual_private import EscThenKeyParser


def _keys(data: str) -> list[str]:
    parser = EscThenKeyParser()
    tokens = list(parser.feed(data))
    time.sleep(0.12)  # past Textual's escape delay: a lone Esc is flushed
    tokens += list(parser.tick())
    return [getattr(t, "key", type(t).__name__) for t in tokens]


@pytest.mark.parametrize(("data", "keys"), [
    ("\x1bx", ["escape", "x"]),  # was alt+x
    ("\x1b2", ["escape", "2"]),  # was "trade_mark_sign"
    ("\x1b\x12", ["escape", "ctrl+r"]),  # the Esc was dropped
    ("\x1b\r", ["escape", "enter"]),
    ("\x1b", ["escape"]),
])
def test_esc_then_a_key_in_one_read_is_both(data, keys):
    assert _keys(data) == keys


@pytest.mark.parametrize(("data", "keys"), [
    ("\x1b[B", ["down"]), ("\x1bOP", ["f1"]), ("\x1b\x1b[B", ["escape", "down"]),
    ("\x1b[<0;5;2M", ["MouseDown"]), ("\x1b[200~hi\x1b[201~", ["Paste"]), ("ab", ["a", "b"]),
])
def test_escape_sequences_still_read_as_themselves(data, keys):
    assert _keys(data) == keys
