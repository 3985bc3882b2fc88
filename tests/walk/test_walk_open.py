"""Views opened the other ways a person opens them, and the form's dropdowns, at typing speed on a busy CPU.

A view opened by a click on its tab or from the command palette takes its keys at once, as one opened by its
number key does (tests/walk/test_walk_views.py); `ctrl+s` applies a preset loaded from the palette; the form's
dropdown axes change by keys (Enter, an arrow, Enter) typed straight on. The tests share one app at 80 x 24
(conftest.preset80) with the typing walk.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from walk import field_text

from tui_lab.analysis import count_params
from tui_lab.presets import load_preset

pytestmark = pytest.mark.walk
START = "gpt2-toy"  # random weights: applying another preset asks nothing, and no shipped model reloads the form


def _footer(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-1]


@pytest.fixture
def app80(preset80):
    return preset80  # `tui-lab --preset gpt2-toy` at 80 x 24, shared with the typing walk (conftest)


def test_a_tab_clicked_takes_its_keys_at_once(app80):
    w = app80
    assert w.click("2 Attention"), w.screen()
    w.press("Down", "Down", "Right")  # no wait: the arrows are the grid's the moment the tab is clicked
    w.wait_for(re.compile(r"query \[2\] .* key \[1\]"), timeout=15)


def test_a_view_from_the_palette_takes_its_keys_at_once(app80):
    w = app80
    w.palette("Show Tour")
    w.press("n")  # no wait: n is the tour's next page
    w.wait_for("Step 2 of", timeout=15)


def test_the_forms_dropdowns_change_by_keys_typed_straight_on(app80):
    """norm and positions, each Enter (open), Down (the next option), Enter (pick), Tabs between: no waits."""
    w = app80
    w.press("1")
    w.wait_for(lambda s: "^s apply" in _footer(s), timeout=15)
    w.press("i", *["Tab"] * 8)  # encoder_layers, then to norm
    w.press("Enter", "Down", "Enter", "Tab", "Tab", "Enter", "Down", "Enter")  # rmsnorm; positions: rope
    want = dataclasses.replace(load_preset(START), norm="rmsnorm", positions="rope")
    screen = w.wait_for(lambda s: field_text(s, "norm") == "rmsnorm" and field_text(s, "positions") == "rope",
                        timeout=20)
    w.wait_for(f"{count_params(want).total:,} parameters", timeout=15)
    assert field_text(screen, "norm_position") == load_preset(START).norm_position  # the Tab between: untouched
    # Esc and a view key in one read (a busy app reads late): Esc leaves the field, 2 opens Attention. It was
    # read as alt+2 ("trade_mark_sign"): the field kept the keys, and every view key after typed into it.
    w.burst("\x1b2")
    w.wait_for(lambda s: "k grid" in _footer(s) and "q quit" in _footer(s), timeout=15)


def test_i_in_train_enters_a_field_on_screen(app80):
    """`i` entered Train's file box, hidden while the corpus is built-in: the digits typed went nowhere seen."""
    w = app80
    w.press("4")
    w.wait_for(lambda s: "g start" in _footer(s), timeout=15)
    w.press("i")
    w.type("12")
    w.wait_for(lambda s: field_text(s, "steps") == "12", timeout=15)
    w.press("Escape")
    w.wait_for(lambda s: "q quit" in _footer(s), timeout=10)


def test_ctrl_s_applies_a_preset_loaded_from_the_palette(app80):
    w = app80
    w.palette("Load preset moe-toy")
    w.press("C-s")  # no wait: the form has the preset, the view has its keys
    w.wait_for("random weights: moe-toy", timeout=40)  # last in the module: the live model stays moe-toy
