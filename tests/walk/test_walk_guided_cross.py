"""The Attention view on a monotonic cross-attention model at typing speed (80 x 24, busy CPU): its grid names
the kind and where each head stopped, and `k` walks on to the T5 bias (issue 27; Pilot: test_app_guided_cross.py)."""

from __future__ import annotations

import re

import pytest
from cross_attention_fixtures import monotonic_checkpoint

pytestmark = pytest.mark.walk


def test_walk_attention_view_names_the_monotonic_grid_and_k_reaches_the_t5_bias(walk, tmp_path):
    """One launch for two grids (the walks' minute is shared): the model has T5 positions too, so after the
    cross-attention grid `k` reaches the relative-position bias over query x key positions (issue 27)."""
    monotonic_checkpoint(tmp_path / "ckpt", positions="t5")
    w = walk("--checkpoint", str(tmp_path / "ckpt"))
    w.wait_for("ckpt", timeout=40)
    w.press("2")
    w.wait_for("encoder self", timeout=20)  # the task's held-out pair opens on the encoder's grid
    w.press("k", "k")  # encoder self -> decoder self -> cross-attention
    w.wait_for("monotonic: hard", timeout=10)
    # Two notes, where the inputs came from and what was loaded, cover the read-out's end for 5 s at 80 x 24:
    # clicked away, newest (lowest) first, as a person does who wants to read what they hide.
    if w.click("numbers-de task"):
        w.wait_for(lambda s: "numbers-de task" not in s, timeout=10)
    w.click("▌ loaded")
    w.press("Down")
    w.wait_for(re.compile(r"query \[1\] .* heads stop"), timeout=10)  # the read-out: how many stopped on this row
    w.press("k")  # cross-attention -> the T5 bias table
    w.wait_for("positions: T5 bias", timeout=10)
