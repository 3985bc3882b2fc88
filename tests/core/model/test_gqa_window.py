"""Grouped-query attention (kv_heads, qkv_bias) and local attention (attention_window, global_tokens):
the config's rules, the two attention paths, causality, padding, cached == uncached, and the counts."""

import itertools

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params, flops_per_token, memory
from tui_lab.analysis.attention_pattern import attended_pairs, query_keys
from tui_lab.analysis.cost import decode_flops_per_token
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.mask_rule import may_attend
from tui_lab.model.masks import local_mask


def tiny(**changes) -> ModelConfig:
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=32,
                dropout=0.0, positions="rope", norm="rmsnorm", activation="swiglu", bias=False)
    return ModelConfig(**{**base, **changes})


def tiny_2017(**changes) -> ModelConfig:
    return tiny(family="encoder-decoder", encoder_layers=2, positions="sinusoidal", **changes)


ATTENTION = [
    dict(kv_heads=2), dict(kv_heads=1), dict(kv_heads=2, qkv_bias=True),
    dict(attention_window=3), dict(attention_window=4, global_tokens=2), dict(kv_heads=1, attention_window=3),
    dict(kv_heads=2, attention_window=3, positions="alibi"), dict(kv_heads=2, positions="learned", bias=True),
]


@pytest.mark.parametrize("changes, message", [
    (dict(kv_heads=3), r"^kv_heads \(3\) must divide heads \(4\)$"),
    (dict(kv_heads=8), r"^kv_heads \(8\) must divide heads \(4\)$"),
    (dict(kv_heads=-1), r"^kv_heads \(-1\) must be 0 or more$"),
    (dict(attention_window=-2), r"^attention_window \(-2\) must be 0 or more$"),
    (dict(global_tokens=1), r"^global_tokens \(1\) needs attention_window > 0"),
])
def test_bad_values_are_one_line(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(**changes)


def test_only_k_and_v_shrink_and_the_cache_stores_kv_heads():
    model = build_model(tiny(kv_heads=1, d_model=32, heads=4), device="meta")
    assert tuple(model.decoder[0].attn.qkv.weight.shape) == (32 + 2 * 8, 32)  # q E x E, k and v 1 x d_head
    assert model.decoder[0].attn.qkv.bias is None
    config = tiny(kv_heads=2)
    cache = build_model(config).new_cache(batch=1, capacity=10)
    assert tuple(cache.layers[0].k.shape) == (1, 2, 10, 8)
    assert cache.bytes() == memory(config).kv_cache_per_token * 10
    assert memory(config).kv_cache_per_token * 2 == memory(tiny()).kv_cache_per_token


def test_qkv_bias_gives_q_k_v_biases_but_not_the_output():
    model = build_model(tiny(kv_heads=2, qkv_bias=True, family="encoder-decoder", encoder_layers=1))
    block = model.decoder[0]
    assert block.attn.qkv.bias is not None and block.attn.out.bias is None
    assert block.cross.q.bias is not None and block.cross.kv.bias is not None and block.cross.out.bias is None
    counted = count_params(model.config).total
    assert counted == sum(p.numel() for p in model.parameters())
    # 5 attention blocks (1 encoder, 2 x 2 decoder), each with q (32), k and v (2 heads x 8) biases
    assert counted - count_params(model.config.replace(qkv_bias=False)).total == 5 * (32 + 2 * 16)


def test_kv_heads_equal_to_heads_is_multi_head_attention_exactly():
    torch.manual_seed(0)
    mha = build_model(tiny()).eval()
    torch.manual_seed(0)
    same = build_model(tiny(kv_heads=4)).eval()
    ids = torch.randint(0, 40, (2, 9))
    assert torch.equal(mha(ids), same(ids))


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_gqa_equals_mha_with_each_kv_head_repeated_for_its_query_group(kv_heads):
    """Query head h reads kv head h // (H / K) (Llama's repeat_kv): an MHA copy with k/v repeated agrees."""
    torch.manual_seed(0)
    gqa = build_model(tiny(kv_heads=kv_heads)).eval()
    mha = build_model(tiny()).eval()
    state = gqa.state_dict()
    for i in range(2):
        w = state[f"decoder.{i}.attn.qkv.weight"]
        q, k, v = w.split((32, kv_heads * 8, kv_heads * 8))
        repeat = [t.view(kv_heads, 8, 32).repeat_interleave(4 // kv_heads, dim=0).reshape(32, 32) for t in (k, v)]
        state[f"decoder.{i}.attn.qkv.weight"] = torch.cat([q, *repeat])
    mha.load_state_dict(state)
    ids = torch.randint(0, 40, (2, 9))
    assert torch.allclose(gqa(ids), mha(ids), atol=1e-5)


@pytest.mark.parametrize("changes", ATTENTION)
def test_causality_and_the_capture_path(changes):
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    ids = torch.randint(0, 40, (2, 10))
    changed = ids.clone()
    changed[:, -1] = (ids[:, -1] + 1) % 40
    a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6) and not torch.allclose(a[:, -1], b[:, -1])
    out = model.run(ids, need_weights=True)
    assert torch.allclose(out.logits, a, atol=1e-5)
    window, glob = model.config.attention_window, model.config.global_tokens
    allowed = local_mask(torch.arange(10), torch.arange(10), window, True, glob) if window else \
        torch.ones(10, 10, dtype=torch.bool).tril()
    for capture in out.attentions:
        assert capture.weights.shape == (2, 4, 10, 10)  # one grid per query head, whatever kv_heads is
        assert torch.all(capture.weights[..., ~allowed] == 0)


@pytest.mark.parametrize("changes", ATTENTION)
def test_cached_logits_and_greedy_tokens_equal_uncached(changes):
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    ids = torch.randint(0, 40, (2, 14))
    full = model(ids)
    cache = model.new_cache(batch=2, capacity=14)
    parts = [model.decode(ids[:, :5], cache=cache)]
    parts += [model.decode(ids[:, t : t + 1], cache=cache) for t in range(5, 14)]
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)
    prompt = ids[:, :3]
    cached = generate(model, prompt, 12, temperature=0.0, use_cache=True)
    assert torch.equal(cached, generate(model, prompt, 12, temperature=0.0, use_cache=False))


@pytest.mark.parametrize("changes", [dict(kv_heads=2), dict(kv_heads=1, attention_window=3)])
def test_encoder_decoder_cross_attention_follows_kv_heads_and_caches(changes):
    torch.manual_seed(0)
    model = build_model(tiny_2017(**changes)).eval()
    assert model.decoder[0].cross.kv.out_features == 2 * model.config.n_kv_heads * 8
    src, tgt = torch.randint(0, 40, (2, 6)), torch.randint(0, 40, (2, 8))
    keep = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])
    full = model(src, tgt, src_mask=keep)
    assert torch.allclose(model.run(src, tgt, src_mask=keep, need_weights=True).logits, full, atol=1e-5)
    memory_ = model.encode(src, keep)
    cache = model.new_cache(batch=2, capacity=8)
    steps = [model.decode(tgt[:, :1], memory_, keep, cache=cache)]
    steps += [model.decode(tgt[:, t : t + 1], cache=cache) for t in range(1, 8)]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    assert cache.memory_kv[0][0].shape[1] == model.config.n_kv_heads


@pytest.mark.parametrize("changes", [dict(attention_window=2), dict(attention_window=3, global_tokens=1, kv_heads=2)])
def test_padding_with_a_window_leaves_real_tokens_alone_and_makes_no_nan(changes):
    """A padded query whose window holds only padding still has a key (itself): no NaN leaks into real rows."""
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    ids = torch.randint(0, 40, (2, 9))
    keep = torch.tensor([[True] * 9, [True] * 3 + [False] * 6])
    out = model.run(ids, tgt_mask=keep, need_weights=True)
    assert not out.logits.isnan().any()
    assert torch.allclose(out.logits[1, :3], model(ids[1:, :3])[0], atol=1e-5)
    assert torch.allclose(model(ids, tgt_mask=keep), out.logits, atol=1e-5)
    for capture in out.attentions:
        assert torch.all(capture.weights[1, :, :3, 3:] == 0)  # no real query reads a padded key


@pytest.mark.parametrize("changes", [dict(attention_window=3), dict(attention_window=4, global_tokens=1)])
def test_encoder_window_is_a_symmetric_band(changes):
    torch.manual_seed(0)
    config = ModelConfig(family="encoder-only", encoder_layers=1, decoder_layers=0, d_model=16, heads=2, d_ff=16,
                         vocab=20, max_len=16, dropout=0.0, **changes)
    out = build_model(config).eval().run(torch.randint(0, 20, (1, 8)), need_weights=True)
    seen = out.attentions[0].weights[0, 0] > 0
    expected = local_mask(torch.arange(8), torch.arange(8), config.attention_window, False, config.global_tokens)
    assert torch.equal(seen, expected)
    assert seen[4].tolist() == [i in (3, 4, 5) or i < config.global_tokens for i in range(8)]


def test_window_semantics_by_example():
    causal = local_mask(torch.arange(6), torch.arange(6), 3, True)
    assert causal[5].tolist() == [False, False, False, True, True, True]  # itself and the 2 before it
    glob = local_mask(torch.arange(6), torch.arange(6), 2, True, global_tokens=1)
    assert glob[5].tolist() == [True, False, False, False, True, True]  # everyone sees the global token
    assert glob[0].tolist() == [True] + [False] * 5  # a causal global token sees only what came before
    band = local_mask(torch.arange(6), torch.arange(6), 2, False, global_tokens=1)
    assert band[0].all() and band[:, 0].all()  # a global token attends everywhere and is attended by everyone


def test_counted_pairs_equal_the_torch_masks():
    for length, window, glob, causal in itertools.product((1, 5, 9), (0, 1, 2, 3, 4, 7, 12), (0, 1, 3), (True, False)):
        if glob and not window:
            continue
        pos = torch.arange(length)
        full = torch.ones(length, length, dtype=torch.bool)
        mask = local_mask(pos, pos, window, causal, glob) if window else (full.tril() if causal else full)
        assert attended_pairs(length, causal, window, glob) == int(mask.sum()), (length, window, glob, causal)
        assert [query_keys(i, length, causal, window, glob) for i in range(length)] == mask.sum(1).tolist()
        pairs = [[may_attend(i, k, causal, window, glob) for k in range(length)] for i in range(length)]
        assert pairs == mask.tolist()
        if window and not glob:
            assert int(mask.sum(1).max()) <= window  # at most `window` keys per query


def test_flops_follow_the_attended_pairs():
    full, local = tiny(), tiny(attention_window=8)
    assert flops_per_token(full, 8) == flops_per_token(local, 8)  # the window holds the whole context
    # past the window each token sees 8 keys: 4 FLOPs x E per key per layer fewer than full
    assert flops_per_token(full, 64) - flops_per_token(local, 64) == 2 * 4 * (64 - 8) * 32
    grown = [decode_flops_per_token(local, n, cached=True)[1] for n in (8, 100, 1000)]
    assert grown[0] == grown[1] == grown[2]  # the cached step's L*d part stops growing at the window
    assert decode_flops_per_token(full, 100, cached=True)[1] > grown[1]
    assert flops_per_token(tiny(kv_heads=1), 16) < flops_per_token(full, 16)  # smaller k/v projections


@pytest.mark.parametrize("changes, message", [(dict(kv_heads=2), "kv_heads is 2, must be 0"),
                                              (dict(attention_window=4), "attention_window is 4, must be 0")])
def test_gpt2_export_refuses_what_gpt2_cannot_compute(changes, message):
    from tui_lab.hf.config import check_exportable
    from tui_lab.presets import load_preset

    with pytest.raises(ValueError, match=f"^cannot export as GPT-2: {message}"):
        check_exportable(load_preset("gpt2-toy", **changes))
