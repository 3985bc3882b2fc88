"""The two axis values the experiments added: positions 'none' and attention_scale 'none'."""

import math

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig
from tui_lab.model.scaled_dot import attend


def test_positions_none_builds_no_position_module_and_counts_exactly():
    config = ModelConfig(positions="none", d_model=16, heads=2, d_ff=32, vocab=20, max_len=8)
    model = build_model(config)
    assert model.pos_embed is None
    assert count_params(config).total == sum(p.numel() for p in model.parameters())
    assert count_params(config).position_embedding == 0


def test_positions_none_runs_past_max_len():
    model = build_model(ModelConfig(positions="none", d_model=16, heads=2, d_ff=32, vocab=20, max_len=8)).eval()
    assert model(torch.randint(0, 20, (1, 12))).shape == (1, 12, 20)


@pytest.mark.parametrize("need_weights", [False, True])
def test_attention_scale_none_is_raw_dot_products_on_both_paths(need_weights):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 16) for _ in range(3))
    raw, _ = attend(q, k, v, causal=True, need_weights=need_weights, scale=1.0)
    # 1/sqrt(D) on q * sqrt(D) is the raw dot product: the same weights, on the default scale
    same, _ = attend(q * math.sqrt(16), k, v, causal=True, need_weights=not need_weights)
    assert torch.allclose(raw, same, atol=1e-5)
    scaled, _ = attend(q, k, v, causal=True, need_weights=need_weights)
    assert not torch.allclose(raw, scaled, atol=1e-3)


def test_a_model_with_attention_scale_none_differs_and_counts_the_same():
    config = ModelConfig(d_model=32, heads=2, d_ff=32, vocab=20, max_len=8, dropout=0.0)
    torch.manual_seed(0)
    a = build_model(config).eval()
    b = build_model(config.replace(attention_scale="none")).eval()
    b.load_state_dict(a.state_dict())
    ids = torch.randint(0, 20, (1, 6))
    assert not torch.allclose(a(ids), b(ids))
    assert count_params(config.replace(attention_scale="none")).total == count_params(config).total
    with pytest.raises(ValueError, match="attention_scale \\('cube'\\) must be one of: sqrt_d_head, none"):
        config.replace(attention_scale="cube")
