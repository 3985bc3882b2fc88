"""Bare `tui-lab`, as a person first runs it in a terminal (80 x 24, a busy CPU): it opens on the Tour's first
page, its nav line naming the key to the model's form, and that key (1) shows the form at once."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.walk


def test_bare_tui_lab_opens_on_the_tours_first_page_and_the_form_is_one_key_away(bare80):
    """On the shared launch (conftest.bare80), which kept the screens it opened with."""
    w = bare80
    assert "preset" not in w.first_screen and "Apply" not in w.first_screen  # not the form
    assert "n next" in w.nav_screen.splitlines()[-1]  # the Tour's keys act: it has the focus
    w.press("3")
    w.wait_for(lambda s: "Step " in s and "n next" in s.splitlines()[-1], timeout=15)  # back on the Tour
    w.press("1")
    w.wait_for(lambda s: "^s apply" in s.splitlines()[-1] and "Apply" in s, timeout=15)
