"""Property: any override of any config field is either accepted and counted exactly, or refused in one line.

Accepted configs are built on the meta device (shapes, no memory), so the arithmetic count is compared
with `sum(p.numel())` of real torch modules even for configs far bigger than this machine.
"""

from __future__ import annotations

import math

import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tui_lab.analysis import count_params
from tui_lab.config import AXES, CHOICES, FAMILIES, SHORTCUTS, ModelConfig, field_names, field_types
from tui_lab.model import build_model
from tui_lab.presets import list_presets, load_preset

NAMES = field_names() + SHORTCUTS
STACKS = ("encoder_layers", "decoder_layers", "layers")  # kept small: every layer is a Python module to build

# What a person, a file or a script might hand over, wrong types included.
JUNK = st.one_of(st.none(), st.booleans(), st.text(max_size=6), st.floats(allow_nan=True, allow_infinity=True),
                 st.lists(st.integers(), max_size=2))
SIZES = st.one_of(st.integers(-3, 8), st.integers(-2, 4096), st.sampled_from([1, 2, 3, 64, 96, 512, 10**6, 50257]))
PLAUSIBLE = {  # values that often fit together, so that accepted configs are common too
    "heads": st.sampled_from([1, 2, 3, 4, 8, 12]),
    "d_model": st.sampled_from([8, 24, 48, 64, 96, 128, 512, 768]),
}


def values_for(name: str) -> st.SearchStrategy:
    kind = int if name in SHORTCUTS else field_types()[name]
    if name in STACKS:
        good = st.integers(-2, 6)
    elif kind is int:
        good = PLAUSIBLE.get(name, st.integers(1, 5000)) | SIZES
    elif kind is float:
        good = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-1, 2),
                         st.floats(0, 1, exclude_max=True))
    elif kind is bool:
        good = st.booleans()
    elif name in CHOICES:
        good = st.one_of(st.sampled_from(CHOICES[name]), st.text(max_size=8))
    else:  # name, source: free text
        good = st.text(max_size=20)
    return st.one_of(*[good] * 5, JUNK)  # mostly plausible values, some junk


# A few fields at a time (as a person edits), sometimes many.
OVERRIDES = st.lists(st.sampled_from(NAMES), max_size=5, unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({key: values_for(key) for key in keys})
) | st.fixed_dictionaries({}, optional={name: values_for(name) for name in NAMES})
NOT_A_FIELD = st.text(min_size=1, max_size=8).map(lambda k: k + "?")  # "?": never a field's name
UNKNOWN = st.one_of(*[st.just({})] * 4, st.dictionaries(NOT_A_FIELD, st.integers(), min_size=1, max_size=1))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(list_presets()), overrides=OVERRIDES, unknown=UNKNOWN)
def test_any_override_is_counted_exactly_or_refused_in_one_line(preset, overrides, unknown):
    try:
        config = load_preset(preset, **overrides, **unknown)
    except ValueError as err:
        message = str(err)
        assert len(message.splitlines()) == 1, message
        named = [name for name in NAMES if name in message]
        assert named, f"names no field: {message}"
        if unknown:
            assert repr(next(iter(unknown))) in message or any(n in overrides for n in named), message
        event("refused")
        return
    event("accepted")
    assert not unknown, f"unknown field accepted: {unknown}"
    for name, value in overrides.items():
        if name in field_names():  # what was asked for is what was built (ints as floats for float fields)
            assert getattr(config, name) == value or math.isclose(getattr(config, name), value), name
    model = build_model(config, device="meta")
    assert count_params(config).total == sum(p.numel() for p in model.parameters())


@st.composite
def sound_configs(draw) -> dict:
    """Overrides that satisfy every rule, across all variant axes: each must be accepted and counted exactly."""
    family = draw(st.sampled_from(CHOICES["family"]))
    heads = draw(st.integers(1, 16))
    d_head = draw(st.integers(1, 48))
    positions = draw(st.sampled_from(CHOICES["positions"]))
    if positions == "rope":
        d_head += d_head % 2
    stacks = {"encoder_layers": draw(st.integers(1, 4)) if family != "decoder-only" else 0,
              "decoder_layers": draw(st.integers(1, 4)) if family != "encoder-only" else 0}
    axes = {axis: draw(st.sampled_from(CHOICES[axis])) for axis in CHOICES
            if axis not in ("family", "positions", "self_attention") and AXES[axis].families == FAMILIES}
    axes |= {k: v for axis, value in list(axes.items()) for k, v in AXES[axis].companions.get(value, {}).items()}
    # Axes that apply to some families only keep their defaults (the preset may be BERT's).
    axes |= {name: getattr(ModelConfig(), name) for name in AXES if name not in axes and name != "family"}
    axes.pop("positions")
    return {"family": family, "heads": heads, "d_model": heads * d_head, "positions": positions, **stacks, **axes,
            "d_ff": draw(st.integers(1, 4096)), "vocab": draw(st.integers(1, 60000)),
            "max_len": draw(st.integers(1, 4096)), "dropout": draw(st.floats(0, 1, exclude_max=True)),
            "tie_embeddings": draw(st.booleans()), "bias": draw(st.booleans()), "final_norm": draw(st.booleans())}


@settings(max_examples=150, deadline=None)
@given(preset=st.sampled_from(list_presets()), overrides=sound_configs())
def test_every_sound_config_is_accepted_and_counted_exactly(preset, overrides):
    config = load_preset(preset, **overrides)
    assert count_params(config).total == sum(p.numel() for p in build_model(config, device="meta").parameters())


def test_meta_counts_match_real_modules_on_a_small_config():
    # The meta device gives real torch modules their shapes without memory: same numbers as on the CPU.
    config = load_preset("transformer-2017-toy", positions="rope", activation="swiglu", bias=False)
    meta = sum(p.numel() for p in build_model(config, device="meta").parameters())
    assert meta == sum(p.numel() for p in build_model(config).parameters()) == count_params(config).total
    assert next(build_model(config, device="meta").parameters()).device == torch.device("meta")
