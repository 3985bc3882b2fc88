"""Linformer and Performer (tui_lab/model/efficient.py) against exact softmax attention, hand-built cases."""

import math

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data import char_tokenizer
from tui_lab.model.efficient import CHUNK, PerformerFeatures, performer_attend
from tui_lab.model.scaled_dot import attend

ENCODER = dict(family="encoder-only", encoder_layers=2, decoder_layers=0, d_model=32, heads=4, d_ff=32, vocab=20,
               max_len=12, dropout=0.0)


def linformer(k: int, **changes) -> ModelConfig:
    return ModelConfig(**ENCODER, self_attention="linformer", linformer_k=k).replace(**changes)


def test_identity_projections_at_k_equal_to_the_length_give_exact_attention():
    torch.manual_seed(0)
    approx = build_model(linformer(12)).eval()
    exact = build_model(ModelConfig(**ENCODER)).eval()
    exact.load_state_dict(approx.state_dict(), strict=False)  # every weight but E and F
    ids = torch.randint(0, 20, (2, 12))
    assert not torch.allclose(approx(ids), exact(ids), atol=1e-3)  # random E, F: an approximation
    for block in approx.encoder:
        block.attn.approx.e.data.copy_(torch.eye(12)[None])
        block.attn.approx.f.data.copy_(torch.eye(12)[None])
    torch.testing.assert_close(approx(ids), exact(ids), atol=1e-5, rtol=1e-5)
    captured = approx.run(ids, need_weights=True).attentions  # the hooked path: same maths, weights over positions
    torch.testing.assert_close(captured[0].weights, exact.run(ids, need_weights=True).attentions[0].weights,
                               atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("sharing, per_layer", [("headwise", 2 * 12 * 4), ("key-value", 12 * 4),
                                                ("none", 2 * 2 * 12 * 4)])
def test_linformer_projections_are_counted_and_performer_features_are_not(sharing, per_layer):
    config = linformer(4, linformer_sharing=sharing, kv_heads=2)
    model = build_model(config)
    assert count_params(config).total - count_params(config.replace(
        self_attention="softmax", linformer_k=0, linformer_sharing="headwise")).total == 2 * per_layer
    assert count_params(config).total == sum(p.numel() for p in model.parameters())
    performer = ModelConfig(self_attention="performer", performer_features=64, d_model=32, heads=4)
    assert count_params(performer).total == count_params(ModelConfig(d_model=32, heads=4)).total
    assert build_model(performer).decoder[0].attn.approx.w.shape == (64, 8)  # a buffer, not a parameter


def test_padding_changes_nothing_on_the_real_positions():
    torch.manual_seed(0)
    for config in (linformer(6), ModelConfig(**ENCODER, self_attention="performer", performer_features=16)):
        model = build_model(config).eval()
        ids = torch.randint(1, 20, (1, 7))
        padded = torch.cat([ids, torch.zeros(1, 5, dtype=torch.long)], 1)
        mask = torch.arange(12)[None] < 7
        torch.testing.assert_close(model.encode(padded, mask)[:, :7], model.encode(ids), atol=1e-5, rtol=1e-5)


def performer_error(m: int, causal: bool, seeds: int = 4) -> float:
    """Mean relative error of FAVOR+ against exact softmax attention on the same inputs, over feature draws."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 40, 16) * 0.5 for _ in range(3))
    exact, _ = attend(q, k, v, causal=causal)
    errors = []
    for seed in range(seeds):
        torch.manual_seed(seed + 1)
        phi = PerformerFeatures(ModelConfig(d_model=64, heads=4, self_attention="performer", performer_features=m))
        out = performer_attend(phi, q, k, v, None, causal, None)
        errors.append(((out - exact).norm() / exact.norm()).item())
    return sum(errors) / seeds


@pytest.mark.parametrize("causal", [False, True])
def test_performer_with_many_features_approaches_softmax(causal):
    few, many = performer_error(64, causal), performer_error(4096, causal)
    assert many < 0.1  # the stated tolerance: within 10% relative error at m = 4,096, D = 16
    assert many < few / 3  # 64x the features: ~1/sqrt(m) says 8x smaller, and at least 3x holds here


def test_the_causal_prefix_sum_form_equals_the_masked_quadratic_form_across_chunks():
    torch.manual_seed(0)
    phi = PerformerFeatures(ModelConfig(d_model=16, heads=2, self_attention="performer", performer_features=32))
    q, k, v = (torch.randn(1, 2, CHUNK + 37, 8) for _ in range(3))
    seen = []
    explicit = performer_attend(phi, q, k, v, None, True, None, pattern_hook=lambda w: seen.append(w) or w)
    torch.testing.assert_close(performer_attend(phi, q, k, v, None, True, None), explicit, atol=1e-5, rtol=1e-4)
    assert torch.allclose(seen[0].sum(-1), torch.ones(1)) and seen[0].triu(1).abs().max() == 0


def test_performer_decoding_with_its_running_sums_equals_a_full_pass():
    torch.manual_seed(0)
    config = ModelConfig(d_model=32, heads=4, d_ff=32, vocab=20, max_len=40, dropout=0.0, positions="rope",
                         self_attention="performer", performer_features=32)
    model = build_model(config).eval()
    ids = torch.randint(0, 20, (2, 30))
    cache = model.new_cache(2, 40)
    steps = [model.decode(ids[:, :10], cache=cache)] + [model.decode(ids[:, i:i + 1], cache=cache)
                                                         for i in range(10, 30)]
    torch.testing.assert_close(torch.cat(steps, 1), model(ids), atol=1e-4, rtol=1e-4)
    assert cache.bytes() == 2 * 4 * 32 * (8 + 1) * 2 * 4  # layers x heads x m x (D + 1) x batch x fp32: no length


def test_performer_features_are_saved_in_checkpoints_and_never_redrawn(tmp_path):
    config = ModelConfig(d_model=16, heads=2, d_ff=16, vocab=20, max_len=8, self_attention="performer",
                         performer_features=8)
    model = build_model(config)
    drawn = model.decoder[0].attn.approx.w.clone()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    ids = torch.randint(0, 16, (2, 8))
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert torch.equal(model.decoder[0].attn.approx.w, drawn)
    save_checkpoint(tmp_path / "ck", model, char_tokenizer("abcdefghijklmnop"))
    torch.manual_seed(123)  # a fresh build would draw other features: loading must not keep them
    assert torch.equal(load_checkpoint(tmp_path / "ck").model.decoder[0].attn.approx.w, drawn)


def test_linformer_trains_its_projections():
    torch.manual_seed(0)
    model = build_model(linformer(4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids = torch.randint(0, 20, (8, 12))
    before = model.encoder[0].attn.approx.e.detach().clone()
    losses = []
    for _ in range(40):
        loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2
    assert not torch.equal(model.encoder[0].attn.approx.e, before)


@pytest.mark.parametrize("changes, message", [
    (dict(self_attention="linformer", linformer_k=4), r"^self_attention 'linformer' mixes every position .* causal"),
    (dict(self_attention="performer", performer_features=8, positions="alibi"), r"^positions 'alibi' adds a bias"),
    (dict(self_attention="performer", performer_features=8, attention_window=3), r"^attention_window \(3\) must be 0"),
    (dict(self_attention="performer", performer_features=-1), r"^performer_features \(-1\) must be 0 \(d_head ln"),
    (dict(performer_features=8), r"^performer_features \(8\) must be 0 unless"),
])
def test_what_an_approximation_cannot_do_is_refused_in_one_line(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**changes)
    with pytest.raises(ValueError, match=r"^linformer_k \(13\) must be from 0 \(max_len / 4\) to max_len \(12\)"):
        linformer(13)


def test_zero_picks_the_default_k_and_m_as_kv_heads_zero_does():
    assert linformer(0).linformer_rows == 3  # max_len / 4
    assert build_model(linformer(0)).encoder[0].attn.approx.e.shape == (1, 12, 3)
    assert count_params(linformer(0)).total == count_params(linformer(3)).total
    performer = ModelConfig(d_model=64, heads=4, self_attention="performer")
    assert performer.n_features == round(16 * math.log(16)) == 44  # d_head ln d_head
    assert build_model(performer, device="meta").decoder[0].attn.approx.w.shape == (44, 16)


def test_the_analysis_counts_what_the_approximations_cost():
    from tui_lab.analysis import flops_per_token, memory
    from tui_lab.analysis.cost import decode_flops_per_token, kv_cache_bytes

    exact = ModelConfig(d_model=64, heads=4, max_len=4096)
    performer = exact.replace(self_attention="performer", performer_features=64)
    # exact attention's core grows with the context, Performer's does not
    assert flops_per_token(exact, 4096) - flops_per_token(exact, 1024) == 2 * 4 * 3072 * 64
    assert flops_per_token(performer, 4096) == flops_per_token(performer, 1024)
    assert decode_flops_per_token(performer, 4000, True) == decode_flops_per_token(performer, 10, True)
    model = build_model(performer.replace(max_len=64, d_model=32))
    assert kv_cache_bytes(performer.replace(max_len=64, d_model=32), 64, batch=3) == model.new_cache(3).bytes()
    assert memory(performer).kv_cache_per_token == 0
    assert memory(performer).kv_cache_full < memory(exact).kv_cache_full / 10
    encoder = ModelConfig(**{**ENCODER, "max_len": 1024})
    low_rank = encoder.replace(self_attention="linformer", linformer_k=64)
    assert memory(low_rank, 1, 1024).activations < memory(encoder, 1, 1024).activations / 4
    assert flops_per_token(low_rank, 1024) < flops_per_token(encoder, 1024) / 4


def test_the_shape_trace_names_what_stands_where_the_scores_were():
    from tui_lab.analysis import shape_trace

    for config, note in ((linformer(4), "scores (N, H, L, k) = (2, 4, 12, 4) against E^T K"),
                         (ModelConfig(**ENCODER, self_attention="performer", performer_features=16),
                          "features phi(q), phi(k) (N, H, L, m) = (2, 4, 12, 16); no L x L scores")):
        rows = shape_trace(config, batch=2, seq_len=12)
        attn = next(r for r in rows if r.path.endswith(".attn"))
        assert attn.note.startswith(note)
        assert sum(r.params for r in rows if r.depth == 2 and ".0." in r.path) == count_params(config).encoder_layer
