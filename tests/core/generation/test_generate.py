"""Generation invariants on tiny configs: cached == uncached, beam 1 == greedy == top-k 1, seeds, eos,
sliding windows, attention rows, and beam search against brute force."""

from __future__ import annotations

import importlib
import itertools

import pytest
import torch
from generate_support import VOCAB, ids, model_for, tiny

import tui_lab
from tui_lab.generation import generate, stream

VARIANTS = [
    dict(positions="learned", norm_position="pre"),
    dict(positions="sinusoidal", norm_position="post", embedding_scale="sqrt_d_model"),
    dict(positions="rope", norm_position="pre", norm="rmsnorm", activation="swiglu"),
    dict(positions="alibi", norm_position="post"),
]


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v['positions']}-{v['norm_position']}")
def test_cached_and_uncached_greedy_agree(family, variant):
    model = model_for(tiny(family, **variant))
    x = ids(2, 6)
    cached = generate(model, x, 24, temperature=0, bos_id=1)
    uncached = generate(model, x, 24, temperature=0, bos_id=1, use_cache=False)
    expected_len = (6 if family == "decoder-only" else 1) + 24
    assert cached.shape == (2, expected_len)
    assert torch.equal(cached, uncached)


def test_greedy_follows_the_full_pass_argmax():
    model = model_for(tiny()).eval()
    out = generate(model, ids(2, 5), 6, temperature=0)
    with torch.no_grad():
        for t in range(5, 11):
            assert torch.equal(out[:, t], model(out[:, :t])[:, -1].argmax(-1))


def test_encoder_decoder_with_padded_source():
    model = model_for(tiny("encoder-decoder", "sinusoidal", "post")).eval()
    src = ids(2, 7)
    keep = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])
    out = generate(model, src, 8, temperature=0, bos_id=1, src_mask=keep)
    alone = generate(model, src[1:, :4], 8, temperature=0, bos_id=1)
    assert torch.equal(out[1], alone[0])  # padding changes nothing
    assert torch.equal(out, generate(model, src, 8, temperature=0, bos_id=1, src_mask=keep, use_cache=False))
    assert (out[:, 0] == 1).all()


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_beam_one_and_top_k_one_equal_greedy(family):
    model = model_for(tiny(family))
    x = ids(3, 5)
    greedy = generate(model, x, 12, temperature=0, bos_id=1)
    assert torch.equal(generate(model, x, 12, beam_size=1, temperature=0, bos_id=1), greedy)
    assert torch.equal(generate(model, x, 12, top_k=1, temperature=1.0, bos_id=1), greedy)
    assert torch.equal(generate(model, x, 12, top_p=1e-6, temperature=0.7, bos_id=1), greedy)


def test_seeded_sampling_is_deterministic():
    model = model_for(tiny())
    x = ids(2, 4)

    def sample(seed: int) -> torch.Tensor:
        seeded = torch.Generator().manual_seed(seed)
        return generate(model, x, 30, temperature=1.5, top_k=20, top_p=0.95, generator=seeded)

    assert torch.equal(sample(3), sample(3))
    assert not torch.equal(sample(3), sample(4))
    cached = generate(model, x, 30, temperature=1.0, generator=torch.Generator().manual_seed(5))
    uncached = generate(model, x, 30, temperature=1.0, use_cache=False, generator=torch.Generator().manual_seed(5))
    assert torch.equal(cached, uncached)


def test_top_k_only_samples_from_the_top_k():
    model = model_for(tiny()).eval()
    x = ids(64, 3)
    with torch.no_grad():
        allowed = model(x)[:, -1].topk(3, dim=-1).indices  # (64, 3)
    out = generate(model, x, 1, temperature=5.0, top_k=3, generator=torch.Generator().manual_seed(0))
    assert (out[:, -1:] == allowed).any(dim=-1).all()
    assert len(set(out[:, -1].tolist())) > 3  # hot sampling really samples


def test_eos_stops_each_row_and_pads_with_eos():
    model = model_for(tiny())
    x = ids(2, 5)
    greedy = generate(model, x, 16, temperature=0)
    eos = int(greedy[0, 5 + 3])  # row 0 emits this at its fourth new token
    out = generate(model, x, 16, temperature=0, eos_id=eos)
    first = [int((row[5:] == eos).nonzero()[0]) if (row[5:] == eos).any() else None for row in out]
    assert first[0] is not None and first[0] <= 3
    for i, stop in enumerate(first):
        if stop is not None:
            assert (out[i, 5 + stop:] == eos).all()
            assert torch.equal(out[i, :5 + stop], greedy[i, :5 + stop])  # greedy until eos
    if all(stop is not None for stop in first):
        assert out.shape[1] == 5 + max(first) + 1  # stops once every row has finished


def test_stream_steps_carry_probabilities_and_finished_rows():
    model = model_for(tiny()).eval()
    x = ids(2, 5)
    steps = list(stream(model, x, 6, temperature=0))
    seq = generate(model, x, 6, temperature=0)
    assert [s.index for s in steps] == list(range(6))
    with torch.no_grad():
        for s in steps:
            probs = torch.softmax(model(seq[:, :5 + s.index])[:, -1], dim=-1)
            assert torch.equal(s.ids, seq[:, 5 + s.index])
            assert torch.allclose(s.probs, probs.gather(-1, s.ids[:, None]).squeeze(-1), atol=1e-5)
            assert not s.finished.any() and not s.slid


@pytest.mark.parametrize("sampling", [dict(temperature=0), dict(temperature=0.7, top_k=3),
                                      dict(temperature=1.3, top_p=0.5)])
def test_stream_candidates_are_the_top_of_the_distribution_drawn_from(sampling):
    from tui_lab.generation.sampling import filter_logits

    model = model_for(tiny()).eval()
    x = ids(2, 5)
    steps = list(stream(model, x, 6, generator=torch.Generator().manual_seed(3), need_candidates=5, **sampling))
    seq = torch.cat([x, torch.stack([s.ids for s in steps], dim=1)], dim=1)
    t = sampling["temperature"]
    with torch.no_grad():
        for s in steps:
            logits = model(seq[:, :5 + s.index])[:, -1]
            if t > 0:  # greedy draws from nothing: its candidates are softmax(logits), which it ignores top-k/p for
                logits = filter_logits(logits / t, sampling.get("top_k"), sampling.get("top_p"))
            probs = torch.softmax(logits, dim=-1)
            cand_ids, cand_probs = s.candidates
            assert cand_ids.shape == cand_probs.shape == (2, 5)
            assert torch.allclose(cand_probs, probs.topk(5, dim=-1).values, atol=1e-5)
            assert torch.allclose(probs.gather(-1, cand_ids), cand_probs, atol=1e-6)  # ids match their probs
            assert (cand_probs[:, :-1] >= cand_probs[:, 1:]).all() and (cand_probs.sum(-1) <= 1 + 1e-5).all()
            if t == 0 or "top_k" in sampling:  # the chosen token is one of the candidates
                assert (cand_ids == s.ids[:, None]).any(-1).all()
            if t == 0:
                assert torch.equal(cand_ids[:, 0], s.ids) and torch.allclose(cand_probs[:, 0], s.probs, atol=1e-6)
    assert all(s.candidates is None for s in stream(model, x, 2, temperature=0))  # only when asked
    with pytest.raises(ValueError, match="^need_candidates"):
        stream(model, x, 2, need_candidates=0)


@pytest.mark.parametrize("use_cache", [True, False])
def test_stream_attention_rows_match_the_full_pass(use_cache):
    model = model_for(tiny("encoder-decoder", "rope", "pre")).eval()
    src = ids(2, 6)
    steps = list(stream(model, src, 5, temperature=0, bos_id=1, need_attention=True, use_cache=use_cache))
    tgt = torch.cat([torch.ones(2, 1, dtype=torch.long), torch.stack([s.ids for s in steps], dim=1)], dim=1)
    for s in steps:
        ctx = s.index + 1
        full = model.run(src, tgt[:, :ctx], need_weights=True).attentions
        full = [c for c in full if c.stack == "decoder"]
        assert [(c.layer, c.kind) for c in s.attentions] == [(c.layer, c.kind) for c in full]
        for row, c in zip(s.attentions, full, strict=True):
            expected_ctx = ctx if c.kind == "decoder-self" else 6
            assert row.weights.shape == (2, 4, 1, expected_ctx)
            assert torch.allclose(row.weights, c.weights[:, :, -1:], atol=1e-5)


def test_learned_positions_slide_past_max_len():
    model = model_for(tiny(max_len=12)).eval()
    x = ids(2, 5)
    steps = list(stream(model, x, 15, temperature=0))
    out = generate(model, x, 15, temperature=0)
    assert out.shape == (2, 20)
    assert torch.equal(out, generate(model, x, 15, temperature=0, use_cache=False))
    # The sequence fed to predict token t has length t; it slides once that passes max_len.
    assert [s.slid for s in steps] == [5 + i > 12 for i in range(15)]
    with torch.no_grad():
        for t in range(13, 20):
            assert torch.equal(out[:, t], model(out[:, t - 12:t])[:, -1].argmax(-1))


def test_a_prompt_longer_than_max_len_is_cropped():
    model = model_for(tiny(max_len=12)).eval()
    x = ids(1, 20)
    steps = list(stream(model, x, 3, temperature=0))
    assert all(s.cropped and s.slid for s in steps)
    out = generate(model, x, 3, temperature=0)
    assert torch.equal(out[:, :20], x)
    with torch.no_grad():
        assert out[0, 20] == model(x[:, -12:])[0, -1].argmax()  # the first token saw the last max_len only


@pytest.mark.parametrize("positions", ["sinusoidal", "rope", "alibi"])
def test_unlimited_positions_go_past_max_len_without_sliding(positions):
    model = model_for(tiny(positions=positions, max_len=8))
    x = ids(1, 4)
    steps = list(stream(model, x, 12, temperature=0))
    assert not any(s.slid for s in steps)
    assert torch.equal(generate(model, x, 12, temperature=0), generate(model, x, 12, temperature=0, use_cache=False))


def test_beam_search_finds_the_best_sequence_by_brute_force():
    config = tiny("encoder-decoder", "sinusoidal", "post", vocab=5)
    model = model_for(config).eval()
    src = torch.tensor([[1, 2, 3, 4]])
    beam = generate(model, src, 3, beam_size=25, bos_id=0)  # 25 = 5 ** 2 beams: exhaustive for 3 tokens
    with torch.no_grad():
        def score(tail: tuple[int, ...]) -> float:
            tgt = torch.tensor([[0, *tail]])
            logp = torch.log_softmax(model(src, tgt[:, :-1]), dim=-1)
            return float(logp[0, torch.arange(3), tgt[0, 1:]].sum())

        best = max(itertools.product(range(5), repeat=3), key=score)
    assert beam[0, 1:].tolist() == list(best)


def test_beam_search_cached_equals_uncached_and_handles_eos():
    model = model_for(tiny("encoder-decoder", "learned", "post"))
    src = ids(3, 6)
    cached = generate(model, src, 10, beam_size=4, bos_id=1, eos_id=2)
    assert torch.equal(cached, generate(model, src, 10, beam_size=4, bos_id=1, eos_id=2, use_cache=False))
    for row in cached:
        hits = (row[1:] == 2).nonzero()
        if len(hits):
            assert (row[1 + int(hits[0]):] == 2).all()  # nothing but eos after eos
    decoder_only = model_for(tiny())
    x = ids(2, 4)
    assert generate(decoder_only, x, 6, beam_size=3).shape == (2, 10)


def test_generation_leaves_the_model_mode_and_grad_mode_alone():
    model = model_for(tiny())
    model.train()
    generate(model, ids(1, 3), 4, temperature=0)
    assert model.training
    it = stream(model, ids(1, 3), 4, temperature=0)
    next(it)
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    list(it)
    assert model.training


def test_a_model_in_eval_mode_is_not_set_again_for_each_generation(monkeypatch):
    """Setting every module's mode costs ~0.5 ms on the English toy, twice a call: a third of a one-token
    generation. A model already in eval mode stays as it is; one with a module left training is switched."""
    model = model_for(tiny(dropout=0.0)).eval()
    monkeypatch.setattr(torch.nn.Module, "train", lambda self, mode=True: pytest.fail("set the modes again"))
    generate(model, ids(1, 3), 4, temperature=0)
    monkeypatch.undo()
    next(iter(model.children())).train()  # one module left training: dropout must still be off
    seen = []
    generate(model, ids(1, 3), 2, temperature=0, on_step=lambda step: seen.append(any(
        m.training for m in model.modules())))
    assert seen == [False, False] and not model.training


def test_tui_lab_generate_is_the_function_after_importing_the_package():
    importlib.import_module("tui_lab.generation.loop")  # a submodule must not hide the function

    model = model_for(tiny())
    expected = generate(model, ids(1, 3), 3, temperature=0)
    assert torch.equal(tui_lab.generate(model, ids(1, 3), 3, temperature=0), expected)


@pytest.mark.parametrize("kwargs, field", [
    (dict(temperature=-1), "temperature"), (dict(top_k=0), "top_k"), (dict(top_p=0.0), "top_p"),
    (dict(top_p=1.5), "top_p"), (dict(beam_size=0), "beam_size"), (dict(max_new_tokens=-1), "max_new_tokens"),
])
def test_bad_settings_are_one_line_value_errors(kwargs, field):
    model = model_for(tiny())
    settings = {"max_new_tokens": 3, **kwargs}
    with pytest.raises(ValueError, match=field):
        generate(model, ids(1, 3), **settings)


def test_bad_inputs_are_one_line_value_errors():
    with pytest.raises(ValueError, match="bos_id"):
        generate(model_for(tiny("encoder-decoder")), ids(1, 3), 3)
    with pytest.raises(ValueError, match="input_ids"):
        generate(model_for(tiny()), torch.tensor([[0, VOCAB]]), 3)
    with pytest.raises(ValueError, match="input_ids"):
        generate(model_for(tiny()), torch.zeros(1, 0, dtype=torch.long), 3)
    encoder_only = tiny("encoder-only", encoder_layers=2, decoder_layers=0)
    with pytest.raises(ValueError, match="encoder-only"):
        generate(model_for(encoder_only), ids(1, 3), 3)
