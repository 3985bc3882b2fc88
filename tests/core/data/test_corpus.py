"""The built-in corpus (deterministic, big and English-like enough) and reading a user's file."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from tui_lab.data import corpus
from tui_lab.data.corpus import builtin_corpus, read_text


def _entropy_bits(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def test_builtin_corpus_is_deterministic_and_large() -> None:
    text = builtin_corpus()
    assert len(text) >= 300_000
    corpus.builtin_corpus.cache_clear()  # regenerate rather than compare the cached object with itself
    assert builtin_corpus() == text
    assert text.startswith("Chapter 1\n\n")


def test_builtin_corpus_looks_like_english_prose() -> None:
    text = builtin_corpus()
    letters = re.sub(" +", " ", re.sub(r"[^a-z ]+", " ", text.lower()))
    # Letters and space of English carry about 4.0-4.3 bits per character; uniform over 27 would be 4.75.
    assert 3.9 < _entropy_bits(letters) < 4.3
    assert 4.0 < _entropy_bits(text) < 4.7  # with capitals, punctuation and newlines
    words = Counter(text.split())
    assert len(words) > 300  # varied, not a handful of repeated sentences
    assert words.most_common(1)[0][0] == "the"
    assert text.count("\n\n") > 500 and text.count('"') > 1000 and text.count("?") > 500
    assert text.isascii()


def test_read_text_normalises_newlines_and_bom(tmp_path) -> None:
    path = tmp_path / "story.txt"
    path.write_bytes("\ufeffOne line\r\nTwo: Grüße\rThree\n".encode())
    assert read_text(path) == "One line\nTwo: Grüße\nThree\n"
    assert read_text(str(path)) == read_text(path)


def test_read_text_missing_file(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"^data: .*nope\.txt does not exist$"):
        read_text(tmp_path / "nope.txt")


def test_read_text_directory(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"^data: .* is a directory"):
        read_text(tmp_path)


@pytest.mark.parametrize("content", [b"", b"  \n\n\t "])
def test_read_text_empty_file(tmp_path, content: bytes) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"^data: .* is empty$"):
        read_text(path)


def test_read_text_not_utf8(tmp_path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("Grüße".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^data: .* is not UTF-8 text \(bad byte at offset 2\)$") as info:
        read_text(path)
    assert "\n" not in str(info.value)
