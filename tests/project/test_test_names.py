"""Every test file's name is unique across the rooms: tests/ has no __init__.py files, so pytest imports each test
module by its basename, and two files of one name stop the whole collection ("import file mismatch"; a moved test
met tests/core/model/test_attention_parts.py this way)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name():
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    shared = sorted(name for name, count in names.items() if count > 1)
    assert shared == [], f"rename one of each: {shared}"
