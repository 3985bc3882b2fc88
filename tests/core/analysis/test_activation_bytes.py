"""Activation memory of an encoder-decoder follows both its lengths (analysis/cost.py `activation_bytes`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui_lab.analysis.cost import activation_bytes
from tui_lab.presets import list_presets, load_preset

TWO = [name for name in list_presets() if load_preset(name).family == "encoder-decoder"]
ONE = [name for name in list_presets() if load_preset(name).family != "encoder-decoder"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(TWO), st.integers(1, 4), st.integers(1, 300), st.integers(1, 300))
def test_the_source_grows_the_encoder_and_cross_attention_and_nothing_else(name, batch, target, source):
    c = load_preset(name)
    as_long = activation_bytes(c, batch, target, 4)
    assert activation_bytes(c, batch, target, 4, source=target) == as_long  # no source: as long as the target
    longer = activation_bytes(c, batch, target, 4, source=source + 1) - activation_bytes(c, batch, target, 4,
                                                                                       source=source)
    assert longer > 0
    # One more source token: the encoder layers' per-token tensors and score row and column, and one more
    # cross-attention score per target query, per head.
    e, f, h = c.d_model, c.d_ff, c.heads
    scores = (source + 1) ** 2 - source ** 2 if c.attention_window == 0 else None
    if scores is not None:
        per_encoder_layer = batch * (10 * e + 2 * f) + batch * h * scores * 2
        cross = batch * h * target * 2
        assert longer == 4 * (c.encoder_layers * per_encoder_layer + c.decoder_layers * cross)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(ONE), st.integers(1, 300), st.integers(1, 300))
def test_a_single_stack_has_no_source_to_count(name, length, source):
    c = load_preset(name)
    assert activation_bytes(c, 2, length, 4, source=source) == activation_bytes(c, 2, length, 4)
