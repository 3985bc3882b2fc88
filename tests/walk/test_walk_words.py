"""Words a person types, read off a real 80-column terminal: `tui-lab presets` shows every name whole (a person
types it after --preset). The rest of the words that run: tests/cli/test_cli_words.py."""

from __future__ import annotations

import re

import pytest

from tui_lab.presets import list_presets

pytestmark = pytest.mark.walk


def test_presets_at_80_columns_shows_every_name_whole(walk):
    out = walk("presets", size=(80, 24)).exited()
    assert "…" not in out, out
    for name in list_presets():
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", out, re.M), (name, out)
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
