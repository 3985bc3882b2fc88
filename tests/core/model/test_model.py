"""The model against torch.nn's layers, and the invariants a user relies on."""

import pytest
import torch
from torch import nn

from tui_lab import build_model, load_preset
from tui_lab.config import ModelConfig
from tui_lab.model.blocks import DecoderBlock, EncoderBlock
from tui_lab.model.hooks import Hooks

TINY_2017 = dict(d_model=32, heads=4, d_ff=64, vocab=50, dropout=0.0)


def _copy_mha(ours_qkv_or_q, ours_out, theirs: nn.MultiheadAttention, kv=None):
    with torch.no_grad():
        w, b = theirs.in_proj_weight, theirs.in_proj_bias
        if kv is None:
            ours_qkv_or_q.weight.copy_(w)
            ours_qkv_or_q.bias.copy_(b)
        else:
            e = w.shape[1]
            ours_qkv_or_q.weight.copy_(w[:e])
            ours_qkv_or_q.bias.copy_(b[:e])
            kv.weight.copy_(w[e:])
            kv.bias.copy_(b[e:])
        ours_out.weight.copy_(theirs.out_proj.weight)
        ours_out.bias.copy_(theirs.out_proj.bias)


def _copy_ffn_norms(ours, theirs, norms):
    with torch.no_grad():
        ours.ffn.up.weight.copy_(theirs.linear1.weight)
        ours.ffn.up.bias.copy_(theirs.linear1.bias)
        ours.ffn.down.weight.copy_(theirs.linear2.weight)
        ours.ffn.down.bias.copy_(theirs.linear2.bias)
        for mine, their in norms:
            mine.load_state_dict(their.state_dict())


def test_encoder_block_equals_torch_encoder_layer():
    config = load_preset("transformer-2017-base", **TINY_2017, layers=1)
    ours = EncoderBlock(config).eval()
    theirs = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    _copy_mha(ours.attn.qkv, ours.attn.out, theirs.self_attn)
    _copy_ffn_norms(ours, theirs, [(ours.attn_norm, theirs.norm1), (ours.ffn_norm, theirs.norm2)])
    x = torch.randn(3, 7, 32)
    keep = torch.tensor([[True] * 7, [True] * 5 + [False] * 2, [True] * 2 + [False] * 5])
    expected = theirs(x, src_key_padding_mask=~keep)  # torch: True = blocked
    got = ours(x, keep[:, None, None, :])  # ours: True = may attend
    assert torch.allclose(got[keep], expected[keep], atol=1e-5)


def test_decoder_block_equals_torch_decoder_layer():
    config = load_preset("transformer-2017-base", **TINY_2017, layers=1)
    ours = DecoderBlock(config).eval()
    theirs = nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    _copy_mha(ours.attn.qkv, ours.attn.out, theirs.self_attn)
    _copy_mha(ours.cross.q, ours.cross.out, theirs.multihead_attn, kv=ours.cross.kv)
    _copy_ffn_norms(ours, theirs, [(ours.attn_norm, theirs.norm1), (ours.cross_norm, theirs.norm2),
                                   (ours.ffn_norm, theirs.norm3)])
    y, memory = torch.randn(2, 7, 32), torch.randn(2, 6, 32)
    causal = nn.Transformer.generate_square_subsequent_mask(7)
    expected = theirs(y, memory, tgt_mask=causal, tgt_is_causal=True)
    seen = []
    hooks = Hooks([("cross_attn.hook_pattern", lambda w, _: seen.append(w))])
    got = ours(y, ours.cross.memory_kv(memory), hooks=hooks.scope(""))
    assert torch.allclose(got, expected, atol=1e-5)
    assert seen[0].shape == (2, 4, 7, 6)  # target x source, not square


VARIANTS = [
    dict(),
    dict(positions="rope"),
    dict(positions="alibi", heads=3, d_model=24),
    dict(positions="sinusoidal", norm_position="post", final_norm=False),
    dict(norm="rmsnorm", activation="swiglu", bias=False, tie_embeddings=False),
]


def _tiny_gpt(**changes):
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=32,
                dropout=0.0)
    return ModelConfig(**{**base, **changes})


@pytest.mark.parametrize("changes", VARIANTS)
def test_causality_last_token_does_not_change_earlier_logits(changes):
    torch.manual_seed(0)
    model = build_model(_tiny_gpt(**changes)).eval()
    ids = torch.randint(0, 40, (2, 10))
    changed = ids.clone()
    changed[:, -1] = (ids[:, -1] + 1) % 40
    a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6)
    assert not torch.allclose(a[:, -1], b[:, -1])


@pytest.mark.parametrize("changes", VARIANTS)
def test_capture_path_equals_fast_path(changes):
    torch.manual_seed(0)
    model = build_model(_tiny_gpt(**changes)).eval()
    ids = torch.randint(0, 40, (2, 9))
    out = model.run(ids, need_weights=True)
    assert torch.allclose(out.logits, model(ids), atol=1e-5)
    assert len(out.attentions) == 2
    for capture in out.attentions:
        assert capture.kind == "decoder-self"
        assert capture.weights.shape == (2, model.config.heads, 9, 9)
        assert torch.allclose(capture.weights.sum(-1), torch.ones(2, model.config.heads, 9), atol=1e-5)
        assert torch.all(capture.weights.triu(1) == 0)  # causal: nothing above the diagonal


def test_encoder_decoder_capture_equals_fast_path_and_cross_is_target_by_source():
    torch.manual_seed(0)
    config = load_preset("transformer-2017-toy", dropout=0.0, vocab=30)
    model = build_model(config).eval()
    src, tgt = torch.randint(0, 30, (2, 6)), torch.randint(0, 30, (2, 7))
    out = model.run(src, tgt, need_weights=True)
    assert torch.allclose(out.logits, model(src, tgt), atol=1e-5)
    shapes = {(c.kind, tuple(c.weights.shape)) for c in out.attentions}
    assert shapes == {("encoder-self", (2, 4, 6, 6)), ("decoder-self", (2, 4, 7, 7)), ("cross", (2, 4, 7, 6))}


def test_padded_keys_get_zero_weight_and_do_not_change_real_outputs():
    torch.manual_seed(0)
    config = load_preset("transformer-2017-toy", dropout=0.0, vocab=30)
    model = build_model(config).eval()
    src = torch.randint(1, 30, (3, 4))
    keep = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.bool)  # seed 002: 4, 3, 1
    tgt = torch.randint(1, 30, (3, 5))
    out = model.run(src, tgt, src_mask=keep, need_weights=True)
    for capture in out.attentions:
        if capture.kind in ("encoder-self", "cross"):
            assert torch.all(capture.weights.masked_select(~keep[:, None, None, :].expand_as(capture.weights)) == 0)
    # Row 2 alone with its one real token gives the same logits as padded in the batch.
    alone = model(src[2:, :1], tgt[2:])
    assert torch.allclose(out.logits[2:], alone, atol=1e-5)


def test_decoder_only_padding_mask_zeroes_padded_keys():
    model = build_model(_tiny_gpt()).eval()
    ids = torch.randint(0, 40, (2, 6))
    keep = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    out = model.run(ids, tgt_mask=keep, need_weights=True)
    for capture in out.attentions:
        assert torch.all(capture.weights[1, :, :, 4:] == 0)
    assert torch.allclose(out.logits[1, :4], model(ids[1:, :4])[0], atol=1e-5)


@pytest.mark.parametrize("changes", VARIANTS)
def test_cached_logits_equal_uncached(changes):
    torch.manual_seed(0)
    model = build_model(_tiny_gpt(**changes)).eval()
    ids = torch.randint(0, 40, (2, 12))
    full = model(ids)
    cache = model.new_cache(batch=2, capacity=12)
    parts = [model.decode(ids[:, :5], cache=cache)]  # a prompt, then one token at a time
    for t in range(5, 12):
        parts.append(model.decode(ids[:, t : t + 1], cache=cache))
    assert cache.length == 12
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)


def test_encoder_decoder_cached_logits_equal_uncached():
    torch.manual_seed(0)
    config = load_preset("transformer-2017-toy", dropout=0.0, vocab=30)
    model = build_model(config).eval()
    src, tgt = torch.randint(0, 30, (2, 6)), torch.randint(0, 30, (2, 8))
    keep = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])
    full = model(src, tgt, src_mask=keep)
    memory = model.encode(src, keep)
    cache = model.new_cache(batch=2, capacity=8)
    steps = [model.decode(tgt[:, :1], memory, keep, cache=cache)]
    steps += [model.decode(tgt[:, t : t + 1], cache=cache) for t in range(1, 8)]  # cross K/V from the cache
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)


def test_learned_positions_refuse_past_max_len_but_sinusoidal_and_rope_do_not():
    ids = torch.randint(0, 40, (1, 40))
    with pytest.raises(ValueError, match="max_len"):
        build_model(_tiny_gpt(positions="learned"))(ids)
    for positions in ("sinusoidal", "rope", "alibi"):
        assert build_model(_tiny_gpt(positions=positions))(ids).shape == (1, 40, 40)


def test_tied_embeddings_share_one_matrix():
    model = build_model(load_preset("gpt2-toy"))
    assert model.lm_head.weight is model.tok_embed.weight
    assert model.lm_head.bias is None


def test_dropout_follows_train_and_eval():
    model = build_model(_tiny_gpt(dropout=0.5))
    ids = torch.randint(0, 40, (2, 8))
    model.train()
    assert not torch.allclose(model(ids), model(ids))
    model.eval()
    assert torch.allclose(model(ids), model(ids))


def test_sinusoidal_model_scales_embeddings_by_sqrt_d_model():
    config = load_preset("transformer-2017-toy")
    model = build_model(config).eval()
    ids = torch.tensor([[3]])
    expected = model.tok_embed(ids) * config.d_model**0.5 + model.pos_embed(0, 1)
    assert torch.allclose(model.embed(ids), expected)


def test_position_tables_grown_during_inference_still_train():
    for positions in ("rope", "sinusoidal"):
        model = build_model(_tiny_gpt(positions=positions))
        with torch.inference_mode():
            model(torch.randint(0, 40, (1, 200)))  # grows the table past max_len
        loss = model(torch.randint(0, 40, (1, 100))).sum()
        loss.backward()
