"""Generation on configs nobody listed: every value of every axis (with the fields it needs) on every toy that
generates, greedy and beam search, through the cache and without it. A Performer's cache had no way to keep the
beams' rows (`KVCache.reorder` read a field only the other caches had): beam search on it died with an
AttributeError; no listed test combined the two."""

from __future__ import annotations

import re

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import AXES
from tui_lab.generation import generate
from tui_lab.presets import list_presets, load_preset

SMALL = {"d_model": 32, "heads": 4, "d_ff": 64, "vocab": 48, "max_len": 24}  # the toys' choices, at a test's size


def generating_configs():
    """(label, config) for every axis value on every toy that generates, where the config accepts it."""
    out = []
    for toy in list_presets():
        if not toy.endswith("-toy") or load_preset(toy).family == "encoder-only":
            continue
        for axis, spec in AXES.items():
            for value in spec.values:
                try:
                    config = load_preset(toy, **{**SMALL, axis: value, **spec.companions.get(value, {})})
                except ValueError:
                    continue  # refused in one line by the form
                out.append((f"{toy} {axis}={value}", config))
    return out


CONFIGS = generating_configs()


def test_the_generated_configs_reach_the_kinds_that_broke():
    labels = [label for label, _ in CONFIGS]
    assert len(labels) > 60
    assert "gpt2-toy self_attention=performer" in labels and "transformer-2017-toy copy=True" in labels


@pytest.mark.parametrize("label,config", CONFIGS, ids=[label for label, _ in CONFIGS])
def test_beam_and_greedy_through_the_cache_equal_the_uncached_run(label, config):
    torch.manual_seed(0)
    model = build_model(config).eval()
    prompt = torch.randint(4, config.vocab, (1, 6))
    kw = {"bos_id": 1} if config.family == "encoder-decoder" else {}
    for beams in (1, 2):
        try:
            cached = generate(model, prompt, 5, temperature=0, beam_size=beams, **kw)
        except ValueError as refused:  # a kind that has no beam search says so in one line, on both paths
            assert "\n" not in str(refused)
            with pytest.raises(ValueError, match=re.escape(str(refused))):
                generate(model, prompt, 5, temperature=0, beam_size=beams, use_cache=False, **kw)
            continue
        uncached = generate(model, prompt, 5, temperature=0, beam_size=beams, use_cache=False, **kw)
        assert torch.equal(cached, uncached), f"{label}, beams {beams}"
