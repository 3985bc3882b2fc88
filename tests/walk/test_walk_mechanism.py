"""The mechanism panels walked at typing speed on a busy CPU, in a real terminal: the keys that open them act
the moment they are pressed, the panels draw while the view answers, and Escape gives the view back.

80 x 24: Generate's lens (l), then the Attention view's ablation (a) and attribution (d); then 160 x 48: Generate's
patching (p), run from the corrupted prompt with Enter, its cursor walked over the grid.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.walk


def _footer(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-1]


def test_lens_ablation_attribution_at_80x24_then_patching_at_160x48(bare80):
    """On the shared launch (conftest.bare80: one decoding thread, no thread measurement): the window grows to
    160 x 48 for the patching panel, as a person widens a terminal, and goes back to 80 x 24 after."""
    w = bare80
    try:
        _walk_panels(w)
    finally:
        w.resize(80, 24)
        w.press("Escape")  # out of a panel left open by a failure: the next walk opens its view from there


def _walk_panels(w) -> None:
    w.press("5")
    w.wait_for(lambda s: "g generate" in _footer(s), timeout=15)
    w.press("l")
    w.wait_for("0_pre at 0 ", timeout=30)
    w.press("Right")
    screen = w.wait_for(re.compile(r"0_pre at 1 '.*top-5 '"), timeout=10)
    assert re.search(r"^ final\b", screen, re.M)  # the last row: the model's own prediction
    w.press("Escape")
    w.wait_for("attention of each new token", timeout=10)
    w.press("2")
    w.wait_for(lambda s: "k grid" in _footer(s), timeout=15)
    w.press("a")
    w.wait_for(re.compile(r"head L0 H0 ablated: loss \d+\.\d{3} \([+-]\d+\.\d{3} nats\)"), timeout=30)
    w.press("d")
    w.wait_for(re.compile(r"head L0 H0 writes [+-]\d+\.\d{3} onto logit"), timeout=30)
    w.press("Escape")
    w.wait_for("query [0]", timeout=10)

    w.resize(160, 48)
    w.press("5")
    w.wait_for(lambda s: "g generate" in _footer(s), timeout=15)
    w.press("p")
    w.wait_for("corrupt", timeout=10)
    w.press("r")  # the panel opens on its grid, where r runs (issue 36 item 2)
    w.wait_for(re.compile(r"layer 0 at 0 'Anna' restores [-\d.]+ of the difference"), timeout=30)
    w.press("Down", "Down", "Right")
    w.wait_for(re.compile(r"layer 2 at 1 '␣walked' restores [-\d.]+ of the difference"), timeout=10)
    w.press("Escape")
    w.wait_for("attention of each new token", timeout=10)
