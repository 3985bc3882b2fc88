"""The MoE presets: Mixtral 8x7B counted exactly as transformers counts it (total and active per token), too big
to build here, and the trainable moe-toy."""

import pytest

from tui_lab import load_preset
from tui_lab.analysis import count_params, memory
from tui_lab.loading import load_model

# MixtralForCausalLM(MixtralConfig()) on the meta device, transformers 5 (docs: REFERENCE.md, issue 14).
MIXTRAL_TOTAL = 46_702_792_704


def mixtral_active_by_hand() -> int:
    """Mixtral's table 1 read as a per-token sum: embeddings and head, and per layer q/o (4096^2 each), k/v
    (4096 x 8 heads x 128 each), the router (4096 x 8), two of the eight SwiGLU experts (3 x 4096 x 14336)
    and two RMSNorms; then the final RMSNorm."""
    d, layers, vocab, d_ff, kv = 4096, 32, 32000, 14336, 8 * 128
    attention = 2 * d * d + 2 * d * kv
    layer = attention + d * 8 + 2 * 3 * d * d_ff + 2 * d
    return 2 * vocab * d + layers * layer + d


def test_mixtral_counts_what_transformers_counts():
    config = load_preset("mixtral-8x7b")
    assert config.kv_heads == 8
    assert count_params(config).total == MIXTRAL_TOTAL


def test_mixtral_active_parameters_per_token():
    counted = count_params(load_preset("mixtral-8x7b"))
    assert counted.active == mixtral_active_by_hand()
    assert 12.8e9 < counted.active < 13e9  # the paper's "13B active"
    idle = 32 * 6 * 3 * 4096 * 14336  # six unchosen experts per layer
    assert counted.total - counted.active == idle


def test_building_mixtral_is_refused_with_the_memory_estimate(monkeypatch):
    import tui_lab.loading as loading

    monkeypatch.setattr(loading, "free_memory", lambda device: 64 * 2**30)
    weights = memory(load_preset("mixtral-8x7b")).weights
    assert weights > 170 * 2**30
    with pytest.raises(ValueError, match=r"^refused: the weights need 1\d\d\.\d GiB but only 64\.0 GiB is free"):
        load_model("preset", "mixtral-8x7b")


def test_the_toy_has_four_experts_top_two():
    config = load_preset("moe-toy")
    assert (config.ffn, config.experts, config.experts_per_token) == ("moe", 4, 2)
    counted = count_params(config)
    assert counted.active < counted.total
