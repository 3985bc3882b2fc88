"""The shape trace lists modules in the order the real forward pass calls them (post-LN: sublayer, then norm)."""

from __future__ import annotations

import pytest
import torch

from tui_lab.analysis import shape_trace
from tui_lab.model import build_model
from tui_lab.presets import load_preset


def _call_order(config) -> list[str]:
    model = build_model(config).eval()
    order: list[str] = []
    for name, module in model.named_modules():
        if name:
            module.register_forward_hook(lambda m, i, o, name=name: order.append(name) if name not in order else None)
    src, tgt = torch.randint(0, config.vocab, (1, 5)), torch.randint(0, config.vocab, (1, 6))
    with torch.no_grad():
        model(src, tgt) if config.family == "encoder-decoder" else model(tgt)
    return order


@pytest.mark.parametrize("preset", ["transformer-2017-toy", "gpt2-toy"])
def test_layer_rows_follow_the_forward_order(preset):
    config = load_preset(preset)
    called = _call_order(config)
    layer = "decoder.0."
    traced = [r.path for r in shape_trace(config, 1, 6, 5) if r.path.startswith(layer)]
    real = [name for name in called if name in traced]
    assert traced == real, (config.norm_position, traced, real)
    attn, norm = traced.index(layer + "attn"), traced.index(layer + "attn_norm")
    assert (attn < norm) == (config.norm_position == "post")


@pytest.mark.parametrize("position", ["pre", "post"])
def test_an_attention_only_block_traces_no_ffn_and_follows_the_forward_order(position):
    config = load_preset("gpt2-toy", ffn="none", norm_position=position)
    traced = [r.path for r in shape_trace(config, 1, 6, 5) if r.path.startswith("decoder.0.")]
    assert traced and not any("ffn" in path for path in traced)
    assert traced == [name for name in _call_order(config) if name in traced]
