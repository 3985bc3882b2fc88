"""The KV cache of a sliding-window layer is a rolling buffer (Mistral): it keeps the last `window` positions
plus the global tokens, stops growing there, and decodes exactly as the uncached full pass does, far past
the window, with RoPE, ALiBi and learned positions, grouped-query attention, batches, beams and padding."""

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis.cost import kv_cache_bytes, kv_cache_tokens, kv_cache_variants, memory
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.model.kv_cache import LayerKV, WindowKV


def tiny(**changes) -> ModelConfig:
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=64,
                dropout=0.0, positions="rope", norm="rmsnorm", activation="swiglu", bias=False)
    return ModelConfig(**{**base, **changes})


WINDOWS = [
    dict(attention_window=4),  # window < prompt (12) and < new tokens
    dict(attention_window=1),  # each query sees only itself
    dict(attention_window=3, global_tokens=2),  # sinks keep their own slots
    dict(attention_window=5, kv_heads=2),  # GQA + window
    dict(attention_window=3, kv_heads=1, positions="alibi"),  # the bias reads absolute key positions
    dict(attention_window=4, global_tokens=1, positions="learned", max_len=64, bias=True),
]


def run_in_chunks(model, ids: torch.Tensor, chunks: list[int]) -> tuple[torch.Tensor, object]:
    """Feed `ids` through one cache in chunks of the given lengths (the rest one token at a time)."""
    cache, parts, at = model.new_cache(ids.shape[0], ids.shape[1]), [], 0
    for size in chunks + [1] * (ids.shape[1] - sum(chunks)):
        parts.append(model.decode(ids[:, at : at + size], cache=cache))
        at += size
    return torch.cat(parts, dim=1), cache


@pytest.mark.parametrize("changes", WINDOWS)
def test_rolling_cache_logits_equal_the_full_pass_far_past_the_window(changes):
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    ids = torch.randint(0, 40, (2, 40))  # 10x the window and more
    with torch.inference_mode():
        full = model(ids)
        for chunks in ([12], [1], [2, 7, 5, 9]):  # a long prefill; one at a time; chunks longer than the window
            cached, cache = run_in_chunks(model, ids, chunks)
            assert torch.allclose(cached, full, atol=1e-5), chunks
            window, sinks = model.config.attention_window, model.config.global_tokens
            assert all(isinstance(layer, WindowKV) and layer.k.shape[-2] == window + sinks for layer in cache.layers)
            kept = sorted(cache.layers[0].pos.tolist())
            assert kept == list(range(sinks)) + list(range(40 - window, 40))  # what a next query can still see


@pytest.mark.parametrize("changes", WINDOWS)
def test_cached_greedy_tokens_and_probabilities_equal_uncached(changes):
    torch.manual_seed(1)
    model = build_model(tiny(**changes)).eval()
    prompt = torch.randint(0, 40, (3, 12))
    probs = {True: [], False: []}
    out = {use: generate(model, prompt, 36, temperature=0.0, use_cache=use,
                         on_step=lambda s, use=use: probs[use].append(s.probs)) for use in (True, False)}
    assert torch.equal(out[True], out[False])
    assert torch.allclose(torch.stack(probs[True]), torch.stack(probs[False]), atol=1e-5)


def test_learned_positions_past_max_len_slide_and_still_agree():
    """Beyond max_len the loop recomputes its last max_len tokens; before that the rolling cache served."""
    torch.manual_seed(2)
    model = build_model(tiny(attention_window=3, positions="learned", max_len=16, bias=True)).eval()
    prompt = torch.randint(0, 40, (2, 6))
    cached = generate(model, prompt, 30, temperature=0.0, use_cache=True)
    assert torch.equal(cached, generate(model, prompt, 30, temperature=0.0, use_cache=False))


def test_beam_search_reorders_the_rolling_cache():
    torch.manual_seed(3)
    model = build_model(tiny(attention_window=3, kv_heads=2, global_tokens=1)).eval()
    prompt = torch.randint(0, 40, (2, 5))
    cached = generate(model, prompt, 20, use_cache=True, beam_size=3)
    assert torch.equal(cached, generate(model, prompt, 20, use_cache=False, beam_size=3))


def test_encoder_decoder_with_padded_sources_and_a_window():
    """Batch 2, the second source padded: the decoder's window cache and the padded cross-attention agree."""
    torch.manual_seed(4)
    config = tiny(family="encoder-decoder", encoder_layers=1, positions="sinusoidal", attention_window=3,
                  kv_heads=2)
    model = build_model(config).eval()
    src = torch.randint(3, 40, (2, 7))
    keep = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])
    cached = generate(model, src, 25, temperature=0.0, bos_id=1, src_mask=keep, use_cache=True)
    assert torch.equal(cached, generate(model, src, 25, temperature=0.0, bos_id=1, src_mask=keep, use_cache=False))


def test_attention_rows_through_the_ring_are_by_position():
    """A cached step's captured weights lie on positions 0..L-1, as the full pass draws them, not on slots."""
    torch.manual_seed(5)
    model = build_model(tiny(attention_window=3, global_tokens=1)).eval()
    ids = torch.randint(0, 40, (1, 11))
    with torch.inference_mode():
        full = model.run(ids, need_weights=True).attentions
        cache = model.new_cache(1, 11)
        model.decode(ids[:, :10], cache=cache)
        _, captures = model.decode(ids[:, 10:], cache=cache, need_weights=True)
    for step, whole in zip(captures, full, strict=True):
        assert step.weights.shape == (1, 4, 1, 11)
        assert torch.allclose(step.weights, whole.weights[:, :, 10:], atol=1e-6)


def test_the_cache_stops_growing_at_the_window_and_the_analysis_says_so():
    config = tiny(attention_window=8, global_tokens=2, kv_heads=2)
    model = build_model(config).eval()
    sizes = []
    with torch.inference_mode():
        cache = model.new_cache(2, 100)
        model.decode(torch.randint(0, 40, (2, 5)), cache=cache)
        for _ in range(60):
            model.decode(torch.randint(0, 40, (2, 1)), cache=cache)
            sizes.append((cache.bytes(), tuple(cache.layers[0].k.shape)))
    assert len(set(sizes)) == 1 and sizes[0][1] == (2, 2, 10, 8)  # 8 window + 2 global slots, from the start
    assert cache.bytes() == kv_cache_bytes(config, 100, batch=2) == memory(config).kv_cache_per_token * 2 * 10
    assert kv_cache_tokens(config, 6) == 6 and kv_cache_tokens(config, 10_000) == 10
    assert kv_cache_tokens(tiny(), 10_000) == 10_000  # full attention keeps every position
    short = model.new_cache(1, 6)  # a run shorter than the window allocates only what it writes
    assert short.bytes() == kv_cache_bytes(config, 6) and short.layers[0].k.shape[-2] == 6
    assert memory(config).kv_cache_full == memory(config).kv_cache_per_token * 10
    assert all(v.full == v.per_token * 10 for v in kv_cache_variants(config))
    full = build_model(tiny()).new_cache(1, 100)  # without a window every position stays
    assert isinstance(full.layers[0], LayerKV) and full.layers[0].k.shape[-2] == 100


def test_a_short_ring_refuses_to_write_past_its_slots():
    model = build_model(tiny(attention_window=8)).eval()
    cache = model.new_cache(1, 4)
    with torch.inference_mode(), pytest.raises(ValueError, match=r"^KV cache holds 4 tokens; asked to write up to 5$"):
        model.decode(torch.randint(0, 40, (1, 5)), cache=cache)


def test_kv_comparison_measures_the_predicted_bounded_bytes():
    from tui_lab.bench.gqa_speed import compare_kv_heads

    config = tiny(attention_window=4, global_tokens=1, heads=4, max_len=64)
    report = compare_kv_heads(config, prompt_len=6, new_tokens=10, repeats=1, batch=2, threads=1)
    for row in report.rows:
        assert row.cache_bytes == row.predicted_bytes == row.kv_bytes_per_token * 2 * 5  # 4 window + 1 global
