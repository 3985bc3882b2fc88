"""The Attention view's parts that need no app: which of j's bindings is live, which grid kinds a family has,
the info line a capture brings, and the head panes as a widget of their own."""

from __future__ import annotations

from types import SimpleNamespace

from textual.widget import Widget

from tui_lab.app.views.attention.capture import Captured
from tui_lab.app.views.attention.effects_panes import HeadPanes
from tui_lab.app.views.attention.grids import has_attention
from tui_lab.app.views.attention.hints import FOOTER_ROOM, KEYS, j_binding

GPT = SimpleNamespace(family="decoder-only", head="lm")
BERT = SimpleNamespace(family="encoder-only", head="mlm")


def test_j_is_on_the_footer_where_it_has_room_on_the_hint_line_where_not_and_refused_where_it_does_not_apply():
    assert j_binding(GPT, FOOTER_ROOM) == "head_detectors"
    assert j_binding(GPT, FOOTER_ROOM - 1) == "head_detectors_narrow"
    assert j_binding(BERT, 200) == "head_detectors_refused"
    assert {b.action for b in KEYS if b.key == "j"} == {"head_detectors", "head_detectors_narrow",
                                                        "head_detectors_refused"}


def test_a_family_has_the_attention_kinds_it_computes():
    assert has_attention("encoder-decoder", "cross") and not has_attention("decoder-only", "cross")
    assert not has_attention("encoder-only", "decoder-self") and has_attention("decoder-only", "decoder-self")
    assert has_attention("encoder-only", "pos-learned")  # masks and positions: every model


def captured(**extra) -> Captured:
    return Captured({}, {}, [], [], [], None, 1, **extra)


def test_a_capture_says_a_translation_or_the_hint():
    assert captured().note("hint") == "hint"
    note = captured(translation="ein").note("hint")
    assert note == "decoder input = the model's own greedy translation: 'ein' · hint"


def test_the_head_panes_are_a_widget_that_says_which_grid_enter_chose():
    assert issubclass(HeadPanes, Widget)
    chosen = HeadPanes.Chosen("decoder-self", 1, 2)
    assert (chosen.kind, chosen.layer, chosen.head) == ("decoder-self", 1, 2)
