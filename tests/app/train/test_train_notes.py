"""The Train view's notes before a run steps (tui_lab/app/views/train/notes.py)."""

from __future__ import annotations

from dataclasses import replace

from tui_lab import load_preset
from tui_lab.analysis import count_params
from tui_lab.app.views.train.notes import vocab_note


def test_a_small_models_vocabulary_note_gives_each_count_once():
    before = load_preset("gpt2-toy")
    after = replace(before, vocab=before.vocab - 100)
    note = vocab_note(before, after, "char")
    a, b = count_params(before).total, count_params(after).total
    assert a < 1_000_000
    assert note.endswith(f": {a:,} -> {b:,} parameters"), note  # not "858,880 -> 834,176 parameters (858,880 -> ...)"
    assert note.count(f"{a:,}") == 1


def test_a_large_models_vocabulary_note_gives_the_short_and_the_exact_counts():
    before = load_preset("gpt2-small")
    after = replace(before, vocab=256)
    a, b = count_params(before).total, count_params(after).total
    note = vocab_note(before, after, "byte")
    assert f"({a:,} -> {b:,})" in note and "M -> " in note, note


def test_the_same_vocabulary_says_nothing():
    config = load_preset("gpt2-toy")
    assert vocab_note(config, config, "char") is None
