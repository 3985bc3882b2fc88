"""Seed 002's guided cross-attention kinds (issue 27 item 5): monotonic's expected alignment against its
recurrence step by step and against the hard process it is the expectation of, hard monotonic attention only
moving forward, location-aware's dot-product adaptation against the moved-keys form it stands for, and both
carrying their alignment through the KV cache (cached == uncached)."""

import itertools
import math

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.model.attention import CrossAttention
from tui_lab.model.guided_cross import (
    LocationAwareCrossAttention,
    MonotonicCrossAttention,
    expected_alignment,
    hard_alignment,
)
from tui_lab.model.scaled_dot import split_heads

GUIDED = ("location-aware", "monotonic")


def tiny(kind: str, **changes) -> ModelConfig:
    return ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=2, d_model=16, heads=4, d_ff=24,
                       vocab=30, max_len=24, dropout=0.0, cross_attention=kind).replace(**changes)


def paper_recurrence(p: list[list[float]]) -> list[list[float]]:
    """Raffel et al. 2017's eq. 10-11, one source word at a time: q_{i,j} = (1 - p_{i,j-1}) q_{i,j-1} + a_{i-1,j},
    a_{i,j} = p_{i,j} q_{i,j}, from a_0 on the first word."""
    prev = [1.0] + [0.0] * (len(p[0]) - 1)
    rows = []
    for p_i in p:
        q, row = 0.0, []
        for j, p_ij in enumerate(p_i):
            q = (1 - p_i[j - 1]) * q + prev[j] if j else prev[j]
            row.append(p_ij * q)
        rows.append(row)
        prev = row
    return rows


def chained(energies: torch.Tensor) -> torch.Tensor:
    """expected_alignment applied step after step over (T, S) energies, from the first word."""
    prev = torch.zeros(energies.shape[-1], dtype=energies.dtype)
    prev[0] = 1.0
    rows = []
    for e in energies:
        prev = expected_alignment(e, prev)
        rows.append(prev)
    return torch.stack(rows)


def test_monotonic_expected_alignment_equals_its_recurrence_step_by_step():
    g = torch.Generator().manual_seed(0)
    energies = torch.randn(6, 9, generator=g, dtype=torch.float64) * 3  # p from ~0 to ~1
    ours = chained(energies)
    p = torch.sigmoid(energies).tolist()
    assert torch.allclose(ours, torch.tensor(paper_recurrence(p), dtype=torch.float64), atol=1e-12)
    # and the sum of products it abbreviates (eq. 9), spelled out
    prev = ours[2]
    direct = [p[3][j] * sum(prev[k].item() * math.prod(1 - p[3][m] for m in range(k, j)) for k in range(j + 1))
              for j in range(9)]
    assert torch.allclose(ours[3], torch.tensor(direct, dtype=torch.float64), atol=1e-12)
    assert (ours >= 0).all() and (ours.sum(-1) <= 1 + 1e-12).all() and ours.sum(-1)[0] > 0.1


def test_expected_alignment_is_the_mean_of_the_stochastic_hard_process():
    """Scan forward from where the last step stopped, stop at j with probability p_j: the share of 200,000
    sampled runs that stop at j is a_{i,j} (standard error < 0.0012)."""
    g = torch.Generator().manual_seed(1)
    energies = torch.randn(3, 6, generator=g, dtype=torch.float64)
    runs = 200_000
    where = torch.zeros(runs, dtype=torch.long)
    alive = torch.ones(runs, dtype=torch.bool)
    p = torch.sigmoid(energies)
    for i in range(3):
        stop_at = torch.full((runs,), 6)
        coins = torch.rand(runs, 6, generator=g, dtype=torch.float64) < p[i]
        for j in reversed(range(6)):
            stop_at = torch.where(coins[:, j] & (j >= where) & alive, j, stop_at)
        alive = stop_at < 6
        where = stop_at.clamp(max=5)
    counts = torch.bincount(stop_at[alive], minlength=6).double() / runs
    assert torch.allclose(counts, chained(energies)[2], atol=0.006)


def test_padded_source_words_are_never_stopped_at():
    energies = torch.tensor([2.0, -1.0, float("-inf"), float("-inf")])
    row = expected_alignment(energies, torch.tensor([1.0, 0, 0, 0]))
    assert row[2:].eq(0).all() and torch.isfinite(row).all() and row[0] > 0.8


def test_hard_monotonic_is_the_expected_alignment_with_p_at_0_or_1_and_only_moves_forward():
    g = torch.Generator().manual_seed(2)
    energies = torch.randn(2, 3, 8, 7, generator=g, dtype=torch.float64) + 0.3  # (N, H, T, S)
    where = torch.zeros(2, 3, dtype=torch.long)
    prev = torch.zeros(2, 3, 7, dtype=torch.float64)
    prev[..., 0] = 1
    positions = []
    for i in range(8):
        row, where = hard_alignment(energies[:, :, i], where)
        prev = expected_alignment(torch.where(energies[:, :, i] >= 0, 60.0, -60.0).double(), prev)
        assert torch.allclose(row, prev, atol=1e-12)
        assert ((row == 0) | (row == 1)).all() and (row.sum(-1) <= 1).all()
        positions.append(torch.where(row.sum(-1) > 0, row.argmax(-1), 99))
    stops = torch.stack(positions, -1)  # (N, H, T); 99 once the scan is past the end
    assert (stops.diff(dim=-1) >= 0).all(), "hard monotonic attention went back over the source"
    assert len(set(stops[stops < 99].tolist())) >= 3  # it did move


def _sharpen(model) -> None:
    """Random weights barely use what the guided kinds add (a random monotonic model stops nowhere with r = -4;
    location features start at std 0.02): give offsets, queries and location projections some spread, so a
    lost alignment would change the outputs."""
    g = torch.Generator().manual_seed(3)
    for block in model.decoder:
        cross = block.cross
        cross.q.weight.data = torch.randn(cross.q.weight.shape, generator=g) * 0.5
        if isinstance(cross, MonotonicCrossAttention):
            cross.r.data = torch.tensor([-0.5, 0.0, 0.5, 1.0])
        else:
            cross.location_proj.weight.data = torch.randn(cross.location_proj.weight.shape, generator=g)


@pytest.mark.parametrize("kind", GUIDED)
def test_cached_decoding_equals_a_full_pass(kind):
    """Step-by-step decoding with the alignment carried in the cache gives the logits of a full teacher-forced
    pass, and greedy ids equal uncached greedy decoding."""
    torch.manual_seed(0)
    model = build_model(tiny(kind)).eval()
    _sharpen(model)
    src, tgt = torch.randint(3, 30, (3, 9)), torch.randint(3, 30, (3, 7))
    src_mask = torch.ones(3, 9, dtype=torch.bool)
    src_mask[1, 6:] = False  # a padded source
    with torch.no_grad():
        full = model.run(src, tgt, src_mask, need_weights=True)
        memory, cache, steps = model.encode(src, src_mask), model.new_cache(3), []
        for i in range(7):
            steps.append(model.decode(tgt[:, i:i + 1], memory if i == 0 else None, src_mask, cache=cache))
    assert torch.allclose(torch.cat(steps, 1), full.logits, atol=1e-5)
    cross = torch.stack([a.weights for a in full.attentions if a.kind == "cross"])  # (layers, N, H, T, S)
    assert cross[:, 1, ..., 6:].eq(0).all()
    assert cross.argmax(-1).unique().numel() >= 3, "the alignment never moved: the test could not fail"
    cached = generate(model, src, 12, temperature=0, bos_id=1, src_mask=src_mask)
    uncached = generate(model, src, 12, temperature=0, bos_id=1, src_mask=src_mask, use_cache=False)
    assert torch.equal(cached, uncached)
    beams = [generate(model, src, 8, beam_size=3, bos_id=1, src_mask=src_mask, use_cache=c) for c in (True, False)]
    assert torch.equal(*beams)


def test_a_lost_cache_state_would_show():
    """The check above can fail: decoding that forgets the alignment between steps differs from a full pass."""
    torch.manual_seed(0)
    model = build_model(tiny("location-aware")).eval()
    _sharpen(model)
    src, tgt = torch.randint(3, 30, (2, 9)), torch.randint(3, 30, (2, 6))
    with torch.no_grad():
        full = model(src, tgt)
        memory, steps = model.encode(src), []
        for i in range(6):
            cache = model.new_cache(2)
            steps.append(model.decode(tgt[:, :i + 1], memory, cache=cache)[:, -1:])
            for layer in cache.layers:
                layer.cross_state = None
        assert torch.allclose(torch.cat(steps, 1), full, atol=1e-5)  # whole prefixes: no state needed
        cache, forgot = model.new_cache(2), []
        for i in range(6):
            forgot.append(model.decode(tgt[:, i:i + 1], memory if i == 0 else None, cache=cache))
            for layer in cache.layers:
                layer.cross_state = None if i == 0 else layer.cross_state * 0 + 1 / 9
    assert not torch.allclose(torch.cat(forgot, 1), full, atol=1e-3)


def test_location_aware_is_dot_product_attention_over_keys_moved_by_the_convolved_alignment():
    """The reference spells out the moved keys k_j + U_h f_{i,j} step by step; with U = 0 it is softmax's."""
    torch.manual_seed(4)
    c = tiny("location-aware")
    loc = LocationAwareCrossAttention(c).eval()
    torch.nn.init.normal_(loc.location_proj.weight, std=0.5)
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    kv = loc.memory_kv(memory)
    q = split_heads(loc.q(x), 4)
    k, v = kv
    prev = torch.zeros(2, 4, 7)
    prev[..., 0] = 1
    outs = []
    for i in range(5):
        f = loc.location_conv(prev.reshape(8, 1, 7)).view(2, 4, 10, 7)  # (N, H, C, S)
        moved = k + torch.einsum("nhcs,hdc->nhsd", f, loc.location_proj.weight.view(4, 4, 10))
        prev = torch.softmax(torch.einsum("nhd,nhsd->nhs", q[:, :, i], moved) / 2.0, -1)
        outs.append((prev[..., None, :] @ v).squeeze(-2))  # (N, H, D)
    reference = loc.out(torch.stack(outs, 2).transpose(1, 2).reshape(2, 5, 16))
    assert torch.allclose(loc(x, kv), reference, atol=1e-5)
    plain = CrossAttention(c).eval()
    plain.load_state_dict({k: v for k, v in loc.state_dict().items() if not k.startswith("location")})
    torch.nn.init.zeros_(loc.location_proj.weight)
    assert torch.allclose(loc(x, kv), plain(x, kv), atol=1e-6)


def test_monotonic_trains_through_its_expected_alignment():
    """In training the alignment is the differentiable expectation (noise before the sigmoid), so r and the
    queries get gradients; in eval it is hard (rows one-hot or zero)."""
    torch.manual_seed(5)
    model = build_model(tiny("monotonic")).train()
    src, tgt = torch.randint(3, 30, (2, 6)), torch.randint(3, 30, (2, 5))
    out = model.run(src, tgt, need_weights=True)
    out.logits.sum().backward()
    cross = model.decoder[0].cross
    assert cross.r.grad is not None and cross.r.grad.abs().sum() > 0
    assert cross.r.detach().eq(-4.0).all()  # the negative initial offset
    soft = [a.weights for a in out.attentions if a.kind == "cross"][0]
    assert ((soft > 0) & (soft < 1)).any()
    model.eval()
    _sharpen(model)
    with torch.no_grad():
        hard = [a.weights for a in model.run(src, tgt, need_weights=True).attentions if a.kind == "cross"][0]
    assert ((hard == 0) | (hard == 1)).all()


@pytest.mark.parametrize("kind, other", list(itertools.product(GUIDED, [
    {}, {"kv_heads": 2}, {"copy": True}, {"decoder_mode": "nat-length-classifier"}, {"attention_scale": "none"},
    {"bias": False, "norm": "rmsnorm"}])))
def test_counts_are_exact_with_other_axes(kind, other):
    config = tiny(kind, **other)
    model = build_model(config)  # tiny: the CPU is quicker than the meta device's first build (~10 s)
    assert sum(p.numel() for p in model.parameters()) == count_params(config).total
    assert count_params(config).total > count_params(config.replace(cross_attention="softmax")).total


def test_the_axis_is_refused_outside_encoder_decoders_in_one_line():
    with pytest.raises(ValueError, match=r"^cross_attention \('monotonic'\) applies to encoder-decoder models only"):
        ModelConfig(cross_attention="monotonic")
    with pytest.raises(ValueError, match=r"^cross_attention \('diagonal'\) must be one of: softmax, location-aware"):
        tiny("diagonal")


def test_scores_can_be_read_and_a_replaced_pattern_meets_the_values():
    from tui_lab.model.hooks import Hooks, attached

    torch.manual_seed(6)
    model = build_model(tiny("location-aware")).eval()
    src, tgt = torch.randint(3, 30, (1, 5)), torch.randint(3, 30, (1, 4))
    seen = []
    with attached(model, Hooks([("decoder.0.cross_attn.hook_attn_scores", lambda s, _: seen.append(s))])):
        model(src, tgt)
    assert seen[0].shape == (1, 4, 4, 5)
    with attached(model, Hooks([("decoder.0.cross_attn.hook_attn_scores", lambda s, _: s * 0)])):
        with pytest.raises(ValueError, match="^cross_attn.hook_attn_scores can only be read"):
            model(src, tgt)
    plain = model(src, tgt)
    with attached(model, Hooks([("decoder.1.cross_attn.hook_pattern", lambda w, _: w * 0)])):
        assert not torch.allclose(model(src, tgt), plain)
