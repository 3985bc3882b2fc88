"""Relative positions (tui_lab/model/relative.py): Shaw et al. 2018's key/value tables and T5's bucket bias are
the papers' formulas, counted exactly, shared where T5 shares, and exact under the KV cache."""

import math

import pytest
import torch
from transformers.models.t5.modeling_t5 import T5Attention

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data.tokenizers import char_tokenizer
from tui_lab.generation import generate
from tui_lab.model.relative import shaw_index, t5_bucket


def tiny(**changes) -> ModelConfig:
    base = dict(family="decoder-only", decoder_layers=2, d_model=16, heads=2, d_ff=24, vocab=30, max_len=16,
                dropout=0.0, positions="relative", relative_clip=3, relative_buckets=8, relative_max_distance=20)
    return ModelConfig(**{**base, **changes})


def test_shaw_scores_and_outputs_are_the_papers_sums():
    """e_ij = q_i (k_j + a^K_ij) / sqrt(D) and z_i = sum_j w_ij (v_j + a^V_ij), written as loops."""
    torch.manual_seed(0)
    model = build_model(tiny(decoder_layers=1)).eval()
    attn = model.decoder[0].attn
    x = torch.randn(1, 7, 16)
    got = attn(x)
    q, k, v = (t.view(1, 7, 2, 8).transpose(1, 2)[0] for t in attn.qkv(x).split(16, dim=-1))  # (H, L, D)
    ak, av, clip = attn.shaw.keys.weight, attn.shaw.values.weight, 3
    z = torch.zeros(2, 7, 8)
    for h in range(2):
        for i in range(7):
            rows = [max(-clip, min(clip, j - i)) + clip for j in range(i + 1)]
            e = torch.stack([q[h, i] @ (k[h, j] + ak[r]) for j, r in enumerate(rows)]) / math.sqrt(8)
            w = torch.softmax(e, dim=0)
            z[h, i] = sum(w[j] * (v[h, j] + av[r]) for j, r in enumerate(rows))
    want = attn.out(z.transpose(0, 1).reshape(1, 7, 16))
    assert torch.allclose(got, want, atol=1e-5)
    assert shaw_index(torch.arange(3), torch.arange(6), 2).tolist() == [[2, 3, 4, 4, 4, 4], [1, 2, 3, 4, 4, 4],
                                                                        [0, 1, 2, 3, 4, 4]]


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_buckets_are_transformers(bidirectional):
    rel = torch.arange(-300, 300)[None, :]
    for buckets, distance in ((32, 128), (8, 20), (6, 9)):
        ours = t5_bucket(rel, bidirectional, buckets, distance)
        theirs = T5Attention._relative_position_bucket(rel, bidirectional, buckets, distance)
        assert torch.equal(ours, theirs), (buckets, distance)


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder", "encoder-only"])
@pytest.mark.parametrize("positions", ["relative", "t5"])
def test_counts_equal_the_built_modules(family, positions):
    layers = {"decoder-only": (0, 3), "encoder-decoder": (2, 3), "encoder-only": (3, 0)}[family]
    config = tiny(family=family, encoder_layers=layers[0], decoder_layers=layers[1], positions=positions)
    model = build_model(config, device="meta")
    count = count_params(config)
    assert sum(p.numel() for p in model.parameters()) == count.total
    stacks = (layers[0] > 0) + (layers[1] > 0)
    want = sum(layers) * 2 * 7 * 8 if positions == "relative" else stacks * 8 * 2
    assert count.position_embedding == want
    names = [n for n, _ in model.named_parameters() if "shaw" in n or "t5_bias" in n]
    assert len(names) == (2 * sum(layers) if positions == "relative" else stacks)


def test_t5_bias_lives_in_the_first_layer_and_serves_every_layer():
    torch.manual_seed(0)
    model = build_model(tiny(positions="t5", decoder_layers=3)).eval()
    blocks = model.decoder
    assert blocks[0].attn.t5_bias is not None and blocks[1].attn.t5_bias is None
    assert "decoder.0.attn.t5_bias.table.weight" in model.state_dict()
    assert not any("t5_bias" in n for n in model.state_dict() if not n.startswith("decoder.0."))
    seen = []
    for block in blocks:  # every layer's bias is the first layer's tensor
        block.attn.register_forward_hook(lambda m, a, o: seen.append(m._position_bias(0, 5, torch.arange(5), False)))
    ids = torch.randint(0, 30, (1, 5))
    before = model(ids)
    assert all(torch.equal(seen[0], s) for s in seen)
    with torch.no_grad():
        blocks[0].attn.t5_bias.table.weight[0, 1] += 2.0  # bucket 0 (distance 0) of head 1, in every layer
    assert not torch.allclose(model(ids), before)


@pytest.mark.parametrize("positions", ["relative", "t5"])
@pytest.mark.parametrize("changes", [{}, dict(attention_window=3, kv_heads=1), dict(norm_position="post")])
def test_cached_decoding_equals_the_full_pass_past_max_len(positions, changes):
    """No hard max_len: 40 tokens through a max_len-16 model, one by one and in chunks, equal the full pass."""
    torch.manual_seed(1)
    model = build_model(tiny(positions=positions, **changes)).eval()
    ids = torch.randint(0, 30, (2, 40))
    with torch.inference_mode():
        full = model(ids)
        for chunks in ([1] * 40, [9, 1, 13, 17]):
            cache, parts, at = model.new_cache(2, 40), [], 0
            for size in chunks:
                parts.append(model.decode(ids[:, at : at + size], cache=cache))
                at += size
            assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5), chunks


@pytest.mark.parametrize("positions", ["relative", "t5"])
def test_encoder_decoder_cached_steps_and_greedy_equal_the_full_pass(positions):
    torch.manual_seed(2)
    model = build_model(tiny(family="encoder-decoder", encoder_layers=2, positions=positions)).eval()
    src, tgt = torch.randint(3, 30, (2, 9)), torch.randint(3, 30, (2, 20))
    with torch.inference_mode():
        memory = model.encode(src)
        full = model.decode(tgt, memory)
        cache = model.new_cache(2, 20)
        steps = [model.decode(tgt[:, :1], memory, cache=cache)]
        steps += [model.decode(tgt[:, t : t + 1], None, cache=cache) for t in range(1, 20)]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    cached = generate(model, src, max_new_tokens=12, temperature=0.0, bos_id=1, use_cache=True)
    assert torch.equal(cached, generate(model, src, max_new_tokens=12, temperature=0.0, bos_id=1, use_cache=False))


def test_t5_encoder_is_bidirectional_and_decoder_causal():
    model = build_model(tiny(family="encoder-decoder", encoder_layers=1, decoder_layers=1, positions="t5"))
    assert model.encoder[0].attn.t5_bias.bidirectional and not model.decoder[0].attn.t5_bias.bidirectional


@pytest.mark.parametrize("positions", ["relative", "t5"])
def test_the_tables_train_and_round_trip_a_checkpoint(positions, tmp_path):
    torch.manual_seed(3)
    tokenizer = char_tokenizer("abcdefghijklmnopqrstuvwxyz")
    config = tiny(positions=positions, dropout=0.1, vocab=tokenizer.vocab_size)
    model = build_model(config).train()
    ids = torch.randint(0, tokenizer.vocab_size, (2, 10))
    loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
    loss.backward()
    grads = [p.grad for n, p in model.named_parameters() if "shaw" in n or "t5_bias" in n]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)
    model.eval()
    save_checkpoint(tmp_path / "ck", model, tokenizer)
    loaded = load_checkpoint(tmp_path / "ck").model.eval()
    with torch.no_grad():
        assert torch.allclose(loaded(ids), model(ids), atol=1e-6)
    if positions == "t5":
        assert loaded.decoder[1].attn.shared_t5[0] is loaded.decoder[0].attn.t5_bias
