"""The config's one axis table (`config.AXES`): every value of every axis, and every pair of values that
the config accepts together, builds a model whose counted parameters equal `sum(numel)`.

The full product of the axes outgrows a quick CI as axes are added; pairs do not (a few hundred meta-device
builds), and a new axis joins this test by being in the table.
"""

import functools
import itertools

import pytest

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.config import AXES, FAMILIES, ModelConfig, field_names

LAYERS = {"encoder-decoder": (2, 1), "decoder-only": (0, 2), "encoder-only": (2, 0)}


def tiny(family: str, **changes) -> ModelConfig:
    enc, dec = LAYERS[family]
    return ModelConfig(family=family, encoder_layers=enc, decoder_layers=dec, d_model=16, heads=4, d_ff=24,
                       vocab=30, max_len=12).replace(**changes)


def settings() -> list[tuple[str, object, dict]]:
    """(axis, value, the fields that set it with its companions) for every value of every axis but family."""
    return [(name, value, {name: value, **axis.companions.get(value, {})})
            for name, axis in AXES.items() if name != "family" for value in axis.values]


def valid(family: str, changes: dict) -> ModelConfig | None:
    try:
        return tiny(family, **changes)
    except ValueError:
        return None


def valid_pairs() -> list[tuple[str, dict]]:
    """(family, fields) for every pair of axis values (with their companions) the config accepts together."""
    pairs = []
    for (name_a, _, a), (name_b, _, b) in itertools.combinations(settings(), 2):
        if name_a == name_b or any(a[k] != b[k] for k in set(a) & set(b)):
            continue
        pairs += [(family, {**a, **b}) for family in FAMILIES if valid(family, {**a, **b}) is not None]
    return pairs


def packed_configs(pairs: list[tuple[str, dict]]) -> list[ModelConfig]:
    """Few configs that between them hold every pair: each one greedily takes every uncovered pair that
    agrees with it and keeps it valid (validation is arithmetic; building, even on meta, is what costs)."""
    uncovered, configs = list(pairs), []
    while uncovered:
        family, merged = uncovered[0]
        for other_family, fields in uncovered[1:]:
            if other_family == family and all(merged.get(k, v) == v for k, v in fields.items()) and \
                    valid(family, {**merged, **fields}) is not None:
                merged = {**merged, **fields}
        config = tiny(family, **merged)
        configs.append(config)
        uncovered = [(f, fields) for f, fields in uncovered
                     if not (f == family and all(getattr(config, k) == v for k, v in fields.items()))]
    return configs


@functools.cache
def pairs_and_configs() -> tuple[list[tuple[str, dict]], list[ModelConfig]]:
    """Computed by the test that asks (~5 s of validation), not at import: each xdist worker imports this file."""
    pairs = valid_pairs()
    return pairs, packed_configs(pairs)


def test_every_axis_is_a_field_of_the_config():
    assert set(AXES) <= set(field_names())


@pytest.mark.parametrize("name, value, changes", settings(), ids=lambda x: str(x) if not isinstance(x, dict) else "")
def test_every_value_of_every_axis_builds_in_some_family(name, value, changes):
    built = [c for family in FAMILIES if (c := valid(family, changes)) is not None]
    assert built, f"{name}={value!r} is refused in every family"


def test_the_packed_configs_hold_every_pair():
    pairs, packed = pairs_and_configs()
    for family, fields in pairs:
        assert any(c.family == family and all(getattr(c, k) == v for k, v in fields.items()) for c in packed)


def test_every_pair_of_values_counts_exactly():
    pairs, packed = pairs_and_configs()
    assert len(pairs) > 200
    wrong = []
    for config in packed:
        model = build_model(config, device="meta")
        if sum(p.numel() for p in model.parameters()) != count_params(config).total:
            wrong.append(config)
    assert not wrong, f"{len(wrong)} of {len(packed)} configs miscounted, e.g. {wrong[0]}"


def test_a_value_where_it_does_not_apply_is_refused_in_one_line():
    restricted = [(n, a) for n, a in AXES.items() if set(a.families) != set(FAMILIES)]
    for name, axis in restricted:
        family = next(f for f in FAMILIES if f not in axis.families)
        value = next(v for v in axis.values if v != getattr(ModelConfig(), name))
        with pytest.raises(ValueError, match=rf"^{name} .* applies to .* models only; this one is {family}$"):
            tiny(family, **{name: value, **axis.companions.get(value, {})})
