"""Direct logit attribution and composition scores, each against a computation written from transformers'
own modules and weights (hooks on its output projections and final norm; its fused c_attn cut by hand)."""

from __future__ import annotations

import pytest
import torch
from mechanism_fixtures import gpt2_pair, llama_pair, random_ids

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.attribution import (
    composition_score,
    composition_scores,
    frozen_norm,
    head_logit_attribution,
    logit_direction,
)
from tui_lab.mechanism.cache import run_with_cache

transformers = pytest.importorskip("transformers")
ANSWER, WRONG = 5, 9


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return gpt2_pair(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return llama_pair(tmp_path_factory.mktemp("llama"))


def _their_dla(theirs, projections, final_norm, ids, heads: int, rms: bool) -> torch.Tensor:
    """(layers, heads) from transformers: each head's slice of its output projection's input times that
    projection's rows, through the final norm with the scale of the stream it actually received."""
    inputs, handles = [], [p.register_forward_pre_hook(lambda m, a: inputs.append(a[0][0, -1])) for p in projections]
    handles.append(final_norm.register_forward_pre_hook(lambda m, a: inputs.append(a[0][0, -1])))
    with torch.no_grad():
        theirs(ids[None])
    for h in handles:
        h.remove()
    *zs, resid = inputs
    direction = theirs.lm_head.weight[ANSWER] - theirs.lm_head.weight[WRONG]
    rows = []
    for z, projection in zip(zs, projections, strict=True):
        # Conv1D (GPT-2) keeps its weight as (in, out); nn.Linear (Llama) as (out, in)
        weight = projection.weight if not rms else projection.weight.T
        d = z.shape[0] // heads
        writes = torch.stack([z[h * d:(h + 1) * d] @ weight[h * d:(h + 1) * d] for h in range(heads)])
        if rms:
            scaled = writes / (resid.pow(2).mean() + final_norm.variance_epsilon).sqrt() * final_norm.weight
        else:
            centred = writes - writes.mean(-1, keepdim=True)
            scaled = centred / (resid.var(unbiased=False) + final_norm.eps).sqrt() * final_norm.weight
        rows.append(scaled @ direction)
    return torch.stack(rows)


def test_gpt2_direct_logit_attribution_matches_transformers(gpt2):
    ours, theirs = gpt2
    ids = random_ids(ours.config.vocab, (9,))
    projections = [block.attn.c_proj for block in theirs.transformer.h]
    expected = _their_dla(theirs, projections, theirs.transformer.ln_f, ids, ours.config.heads, rms=False)
    got = head_logit_attribution(ours, ids, ANSWER, WRONG)
    assert got.shape == (3, 4) and (got - expected).abs().max() < 1e-8


def test_llama_direct_logit_attribution_matches_transformers(llama):
    ours, theirs = llama
    ids = random_ids(ours.config.vocab, (9,))
    projections = [layer.self_attn.o_proj for layer in theirs.model.layers]
    expected = _their_dla(theirs, projections, theirs.model.norm, ids, ours.config.heads, rms=True)
    # transformers' RMSNorm computes in float32 even for a float64 model: agreement to ~1e-8, not 1e-12
    assert (head_logit_attribution(ours, ids, ANSWER, WRONG) - expected).abs().max() < 1e-6


@torch.no_grad()
def test_every_writers_share_adds_up_to_the_logit_difference(gpt2):
    ours, _ = gpt2
    ids = random_ids(ours.config.vocab, (9,), seed=2)
    layers = ours.config.decoder_layers
    names = ["blocks.0.hook_resid_pre", f"blocks.{layers - 1}.hook_resid_post"]
    names += [f"blocks.{i}.hook_mlp_out" for i in range(layers)]
    logits, cache = run_with_cache(ours, ids[None], names=names)
    resid, direction = cache[names[1]][0, -1], logit_direction(ours, ANSWER, WRONG)
    writes = [cache[names[0]][0, -1]] + [cache[f"blocks.{i}.hook_mlp_out"][0, -1] for i in range(layers)]
    writes += [block.attn.out.bias for block in ours.decoder]  # the output projections' biases
    rest = sum(float(frozen_norm(ours, w, resid) @ direction) for w in writes)
    norm_bias = float(ours.decoder_norm.bias @ direction)
    total = float(head_logit_attribution(ours, ids, ANSWER, WRONG).sum()) + rest + norm_bias
    assert abs(total - float(logits[0, -1, ANSWER] - logits[0, -1, WRONG])) < 1e-8


@torch.no_grad()
def test_composition_matches_transformerlens_formula_on_transformers_weights(gpt2):
    """TransformerLens's folding (gamma into W_Q/W_K/W_V, those centred over d_model, W_O centred over its output),
    written on GPT-2's c_attn / c_proj; benchmarks/agreement/transformer_lens_check.py compares with TransformerLens
    itself."""
    ours, theirs = gpt2
    e, heads = ours.config.d_model, ours.config.heads
    d = e // heads

    def matrices(layer: int, h: int):
        block = theirs.transformer.h[layer]
        w, gamma = block.attn.c_attn.weight, block.ln_1.weight[:, None]  # (E, 3E): x @ w = q | k | v
        q, k, v = (gamma * w[:, part * e + h * d:part * e + (h + 1) * d] for part in range(3))
        o = block.attn.c_proj.weight[h * d:(h + 1) * d]  # (D, E)
        q, k, v = (m - m.mean(0, keepdim=True) for m in (q, k, v))  # centred over d_model: LN's output has mean 0
        return q, k, v, o - o.mean(-1, keepdim=True)

    scores = {kind: composition_scores(ours, kind) for kind in ("Q", "K", "V")}
    for l1, h1, l2, h2 in [(0, 0, 1, 3), (0, 2, 2, 1), (1, 3, 2, 0)]:
        _, _, v1, o1 = matrices(l1, h1)
        q2, k2, v2, o2 = matrices(l2, h2)
        ov = v1 @ o1
        for kind, reader in (("Q", q2 @ k2.T), ("K", k2 @ q2.T), ("V", v2 @ o2)):
            expected = (ov @ reader).norm() / (ov.norm() * reader.norm())
            assert abs(float(scores[kind][l1, h1, l2, h2]) - float(expected)) < 1e-9, (kind, l1, h1, l2, h2)
    assert float(scores["K"][1, 0, 0, 0]) == 0.0  # only earlier -> later


def test_a_head_whose_keys_read_an_earlier_heads_output_scores_one():
    """Head (0, 0) writes its input's dim 0 to dim 4, head (0, 1) writes dim 2 to dim 5; head (1, 0)'s keys
    read dim 4 and its queries dim 1: K-composition 1 with (0, 0), 0 with (0, 1); no Q-composition."""
    config = ModelConfig(family="decoder-only", decoder_layers=2, d_model=8, heads=2, d_ff=8, vocab=10, max_len=8,
                         norm="rmsnorm", bias=False, dropout=0.0)
    model = build_model(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.zero_()
        first, second = model.decoder[0].attn, model.decoder[1].attn  # qkv rows: q 0..7, k 8..15, v 16..23
        first.qkv.weight[16, 0] = first.out.weight[4, 0] = 1.0  # head 0: v reads dim 0, o writes dim 4
        first.qkv.weight[20, 2] = first.out.weight[5, 4] = 1.0  # head 1: v reads dim 2, o writes dim 5
        second.qkv.weight[0, 1] = second.qkv.weight[8, 4] = 1.0  # head 0: q reads dim 1, k reads dim 4
    assert composition_score(model, (0, 0), (1, 0), "K") == pytest.approx(1.0)
    assert composition_score(model, (0, 1), (1, 0), "K") == pytest.approx(0.0)
    assert composition_score(model, (0, 0), (1, 0), "Q") == pytest.approx(0.0)
    with pytest.raises(ValueError, match="earlier layer"):
        composition_score(model, (1, 0), (0, 0))
