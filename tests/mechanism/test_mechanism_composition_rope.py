"""Rotation-aware composition on a RoPE model: the relative rotation is the one the model's attention scores go
through, the offset-0 term is the plain (TransformerLens) score, and `rotary` leaves V and non-RoPE models alone."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.attribution import composition_score, composition_scores, rope_rotation
from tui_lab.mechanism.cache import run_with_cache

ROPE = ModelConfig(name="rope-tiny", family="decoder-only", decoder_layers=2, d_model=32, heads=2, d_ff=64,
                   ffn="none", vocab=40, max_len=12, positions="rope", bias=False, dropout=0.0)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    return build_model(ROPE).double().eval()


def test_the_relative_rotation_is_what_the_attention_scores_go_through(model):
    ids = torch.tensor([[3, 7, 1, 9, 22, 5, 5, 31]])
    names = ["blocks.0.attn.hook_q", "blocks.0.attn.hook_k", "blocks.0.attn.hook_attn_scores"]
    _, cache = run_with_cache(model, ids, names=names)
    q, k, scores = (cache[n][0] for n in names)  # (L, H, D), (L, K, D), (H, L, L)
    d = q.shape[-1]
    for i in range(ids.shape[1]):
        for j in range(i + 1):
            raw = q[i, 1] @ rope_rotation(d, i - j, ROPE.rope_base) @ k[j, 1]
            # the model keeps its cos/sin table in float32: agreement to ~1e-7, the sign and offset exact
            assert float(scores[1, i, j]) == pytest.approx(float(raw) / d ** 0.5, rel=1e-5, abs=1e-8)


def test_rotary_is_the_mean_over_offsets_whose_first_term_is_the_plain_score(model, monkeypatch):
    plain = composition_score(model, (0, 0), (1, 1), "K")
    rotary = composition_score(model, (0, 0), (1, 1), "K", rotary=True)
    assert rotary != pytest.approx(plain, abs=1e-6)  # the rotation changes what the keys read
    import tui_lab.mechanism.attribution as attribution

    real = attribution.rope_rotation
    monkeypatch.setattr(attribution, "rope_rotation", lambda d, t, base: real(d, 0, base))  # every offset as 0
    assert composition_score(model, (0, 0), (1, 1), "K", rotary=True) == pytest.approx(plain, abs=1e-12)
    monkeypatch.setattr(attribution, "rope_rotation", real)
    assert composition_score(model, (0, 1), (1, 0), "V", rotary=True) == \
        pytest.approx(composition_score(model, (0, 1), (1, 0), "V"), abs=1e-12)
    learned = build_model(ROPE.replace(positions="learned")).double().eval()
    assert torch.equal(composition_scores(learned, "Q", rotary=True), composition_scores(learned, "Q"))
