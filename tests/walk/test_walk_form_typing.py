"""Typing into the Architecture form as a person does: in a terminal, ~15 keys a second, on a busy CPU.

Each field must hold exactly the keys typed into it, and the parameter count must be that of the values
typed. Before the fix, a key that arrived with the Tab before it (a busy app reads them in one go) went
to the field the Tab was leaving: Tab + "512" typed 512 into decoder_layers and left d_model as it was.
"""

from __future__ import annotations

import dataclasses
import random
import re

import pytest
from walk import Walk, field_text

from tui_lab.analysis import count_params
from tui_lab.app.views.architecture.config_form import FORM_FIELDS, SIZE_FIELDS
from tui_lab.config import parse_value
from tui_lab.presets import load_preset

pytestmark = pytest.mark.walk
START = "gpt2-toy"  # random weights: no shipped model arrives to reload the form mid-walk


def _enter_form(walk: Walk) -> None:
    """Into the form's first text box (encoder_layers) the way the view says: `i`; Tab walks on in order."""
    walk.wait_for(lambda s: "autoregressive" in s and f"parameters · {START}" in s, timeout=30)  # START's form
    walk.press("i")
    walk.wait_for(lambda s: "q quit" not in s, timeout=10)  # a field has the keys: the footer drops q


def _tab_to(walk: Walk, at: str, name: str) -> str:
    """Tab from field `at` to field `name` (each editor, text or not, is one Tab stop)."""
    steps = FORM_FIELDS.index(name) - FORM_FIELDS.index(at)
    walk.press(*["Tab"] * steps)
    return name


# The sizes: eight text boxes in a row (the axes further down sit behind a dozen selects, ~1 s a Tab on the busy
# CPU at 160 x 48; the walk's minute has no room for them).
FIELDS = SIZE_FIELDS
VALID = {"encoder_layers": "0", "decoder_layers": "3", "d_model": "96", "heads": "6", "d_ff": "250", "vocab": "777",
         "max_len": "64", "dropout": "0.25"}


def test_random_strings_typed_into_the_fields_are_what_the_fields_hold(preset80):
    """A random string of digits into each field at 15-20 keys/s; then a valid config typed straight through,
    and the count on screen is that config's."""
    rng = random.Random(23)
    w = preset80  # shared (conftest): widened to 160 x 48 for the walk, the form START's (by the palette if need be)
    w.resize(160, 48)
    try:
        _type_fields(w, rng)
    finally:
        w.press("Escape", "C-r")  # out of the field, the form back to the live model
        w.resize(80, 24)


def _type_fields(w: Walk, rng: random.Random) -> None:
    w.press("1")
    screen = w.wait_for(lambda s: "^s apply" in s.splitlines()[-1], timeout=15)
    if not re.search(rf"parameters · {START}(?![-\w])", screen):  # a walk before left another model, or an edit
        w.palette(f"Load preset {START}")  # (this file runs first on the shared app: the form is START's as launched)
    _enter_form(w)
    at = FIELDS[0]
    for name in FIELDS:
        text = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 4)))
        at = _tab_to(w, at, name)
        w.type(text, rate=rng.uniform(15, 20))
        w.wait_for(lambda s, n=name, t=text: field_text(s, n) == t, timeout=10)
    w.press(*["BTab"] * (FORM_FIELDS.index(at) - FORM_FIELDS.index(FIELDS[0])))
    at = FIELDS[0]
    for name in FIELDS:  # no waiting now: a person types on while the screen catches up
        at = _tab_to(w, at, name)
        w.type(VALID[name], rate=rng.uniform(15, 20))
    config = dataclasses.replace(load_preset(START), **{n: parse_value(n, t) for n, t in VALID.items()})
    # Every field as typed (dropout changes no count: the count alone could be read mid-word), and its count.
    w.wait_for(lambda s: all(field_text(s, n) == VALID[n] for n in FIELDS), timeout=15)
    w.wait_for(f"{count_params(config).total:,} parameters", timeout=15)
