"""Every view's keys work the moment it opens, as a person opens it: a number key, an F-key, at typing speed.

A view opens with focus on the widget its keys act on (never a text field): the footer names its keys
beside "q quit", and the first key pressed acts. Tab or `i` enters a field, Esc leaves it. The tests share
one app at 80 x 24 with the opening and mechanism walks (conftest.bare80: a launch on the busy CPU costs
seconds of the walks' minute); each opens its view first.
"""

from __future__ import annotations

import dataclasses
import re
import time

import pytest
from screen_rules import cut_numbers, footer_problems
from walk import Walk, field_text, line_with

from tui_lab.analysis import count_params
from tui_lab.presets import load_preset

pytestmark = pytest.mark.walk

# A key each view's footer names once the view is open (and so live: the footer shows the focused chain's keys).
FOOTER = {"1": "^s apply", "2": "k grid", "3": "n next", "4": "g start", "5": "g generate", "6": "r run",
          "7": "r run"}


def _footer(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-1]


def _open(w: Walk, key: str, view: str) -> str:
    """Press `key` (a number or F-key) and wait until view `view`'s keys are on the footer."""
    w.press(key)
    return w.wait_for(lambda s: FOOTER[view] in _footer(s) and "q quit" in _footer(s), timeout=15)


@pytest.fixture
def app80(bare80):
    return bare80  # bare `tui-lab` at 80 x 24, shared with the other walks that start from it (conftest)


def test_train_on_launch_says_it_is_building_the_trainer(walk):
    """`--train`: from the first frame to the trainer's first step it never says press g, nor PAUSED."""
    w = walk("--preset", "gpt2-toy", "--train", size=(160, 48))
    seen = []
    end = time.monotonic() + 40
    while time.monotonic() < end and not any(re.search(r"step 0/\d+ +building", s) for s in seen[-1:]):
        seen.append(w.screen())
        time.sleep(0.05)
    shown = "\n".join(seen)
    assert re.search(r"step 0/\d+ +building the trainer", shown), seen[-1]
    assert "press g to train" not in shown  # it is training already: nothing to press
    assert not re.search(r"step 0/\d+ +PAUSED", shown)


def test_every_view_opened_by_number_key_takes_its_keys_and_keeps_its_numbers_whole(app80):
    """Each view by its number key: its footer names its keys beside `q quit` (they are live: the footer shows the
    focused chain's keys). Issue 25, read off the real terminal at 80 x 24 on the same visit: no run of digits
    touches "…" or a pane's edge (tests/app/shell/test_app_screen_rules.py checks every tab and more)."""
    w = app80
    problems = []
    for view in "2345671":
        _open(w, view, view)
        lines = w.wait_steady(0.3, timeout=5).rstrip("\n").splitlines()
        problems += [f"view {view}: {p}" for p in cut_numbers(lines[:-1], w.cols)]
        problems += [f"view {view}: {p}" for p in footer_problems(lines[-1], [FOOTER[view]])]
    assert not problems, "\n".join(problems)
    # and by F-key, straight from one to the next (F6 F5 once left Speed in front: its focus told it late)
    for view in "651":
        _open(w, f"F{view}", view)


def test_attention_arrows_move_the_cell_at_once(app80):
    w = app80
    _open(w, "2", "2")
    w.wait_for("query [0]", timeout=15)
    w.press("Down", "Down", "Right")
    w.wait_for(re.compile(r"query \[2\] .* key \[1\]"), timeout=10)


def test_generate_g_generates_and_i_enters_the_prompt(app80):
    w = app80
    _open(w, "5", "5")
    prompt = line_with(w.screen(), "Generate g").split("Generate g")[0].strip()
    w.press("g")
    screen = w.wait_for(re.compile(r"\d+ tokens in [\d.]+ s"), timeout=30)
    assert line_with(screen, "Generate g").split("Generate g")[0].strip() == prompt  # g did not type into it
    w.press("i")  # into the prompt: now every letter types
    w.type(" a g")
    w.wait_for(lambda s: line_with(s, "Generate g").split("Generate g")[0].strip().endswith("a g"), timeout=10)
    w.press("Escape")  # out again: g generates
    w.wait_for(lambda s: "q quit" in _footer(s), timeout=10)
    w.press("g")
    w.wait_for(re.compile(r"\d+ tokens in [\d.]+ s"), timeout=30)


def test_a_key_sent_with_its_tab_lands_in_the_field_tab_moved_to(app80):
    """A busy terminal delivers "Tab 5 1 2" in one read: the digits belong to the field Tab moved to.
    Before, they went to the field Tab was leaving (decoder_layers 4512, d_model untouched)."""
    w = app80
    _open(w, "1", "1")
    w.press("i")  # the form's first text box, encoder_layers
    w.wait_for(lambda s: "q quit" not in _footer(s), timeout=10)  # a field has the keys: the footer drops q
    w.press("Tab")  # decoder_layers
    w.wait_steady(0.5)
    w.burst("\t512")
    screen = w.wait_for(lambda s: field_text(s, "d_model") == "512", timeout=10)
    live = load_preset("gpt2-toy-english")
    assert field_text(screen, "decoder_layers") == str(live.decoder_layers), screen
    w.wait_for(f"{count_params(dataclasses.replace(live, d_model=512)).total:,} parameters", timeout=10)
    # Out of the field, then the form back to the live model. (Esc and a key within Textual's escape delay
    # read as alt+key, in any terminal: the walk waits for the footer as a person's eye would.)
    w.press("Escape")
    w.wait_for(lambda s: "q quit" in _footer(s), timeout=10)
    w.press("C-r")
    w.wait_for(lambda s: field_text(s, "d_model") == str(live.d_model), timeout=10)


def test_train_names_its_keys_and_pause_reads_resume(app80):
    """At 80 x 24: the panel key is named; p on a run reads Resume, and g then goes on (not "already going").

    The trainer's process is niced and the walk's CPU is busy: its build takes longer than the walk may, so
    the keys act on the run while it is built (held), which is when a person presses them too."""
    w = app80
    _open(w, "4", "4")
    w.press("l")  # a lower panel in the loss plot's place, its border naming the key (issue 36 items 3 and 4)
    w.wait_for(lambda s: re.search(r"\bl (next panel|loss plot)\b", s), timeout=15)
    w.press("g")
    w.wait_for("building the trainer", timeout=15)
    w.press("p")
    screen = w.wait_for("Resume p", timeout=15)
    assert "Pause p" not in screen and "PAUSED" not in screen  # not paused yet: it will start paused
    w.press("g")  # paused: g goes on, as the Resume button would
    w.wait_for("Pause p", timeout=15)
    screen = w.wait_steady(0.5, timeout=2)  # a refusal's note would show within the half second after the label
    assert "already going" not in screen
    w.press("x")  # the run stops once built (last in the module: nothing after waits on it)


def test_attention_c_opens_inside_one_head_and_its_arrows_move_the_query(app80):
    """`c`: the query under the cursor through q·k, √d_k, the mask, softmax and Σ p·v, in the grid's place."""
    w = app80
    _open(w, "2", "2")
    w.press("c")
    screen = w.wait_for(lambda s: "= output" in s or "pick one head" in s, timeout=20)
    if "pick one head" in screen:  # the mean of heads is no head's own computation
        w.press("h")
        screen = w.wait_for(lambda s: "Σ p·v" in s and "= output" in s, timeout=20)
    for label in ("q·k", "÷ √", "mask", "softmax", "= grid"):
        assert label in screen, screen
    query = int(re.search(r"query \[(\d+)\]", screen).group(1))
    w.press("Down" if query == 0 else "Up")
    w.wait_for(f"query [{query + 1 if query == 0 else query - 1}]", timeout=10)
    w.press("c")
    w.wait_for(lambda s: "Σ p·v" not in s and ("c inside" in s or "c one head" in s), timeout=10)
