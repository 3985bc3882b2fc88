"""Head ablation against transformers on the same weights: a forward pre-hook on the attention's output
projection sets one head's slice of its input to zero (or to that slice's mean over the batch's positions),
since transformers 5 has no head_mask. Loss and logit changes agree within 1e-4."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from mechanism_fixtures import gpt2_pair, llama_pair, random_ids

from tui_lab.mechanism.ablation import Metric, head_ablation

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module", params=["gpt2", "llama-gqa"])
def pair(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    return (gpt2_pair if request.param == "gpt2" else llama_pair)(folder), request.param


def _out_projection(theirs, family: str, layer: int):
    return theirs.transformer.h[layer].attn.c_proj if family == "gpt2" else theirs.model.layers[layer].self_attn.o_proj


def _their_delta(theirs, family: str, ids, layer: int, head: int, d_head: int, mode: str, metric) -> float:
    """metric(ablated) - metric(clean), the ablation done by a pre-hook on transformers' output projection."""
    cut = slice(head * d_head, (head + 1) * d_head)
    projection = _out_projection(theirs, family, layer)
    seen = []
    keep = projection.register_forward_pre_hook(lambda m, args: seen.append(args[0][..., cut].clone()))
    with torch.no_grad():
        clean = metric(theirs(ids).logits)
    keep.remove()
    mean = seen[0].mean(dim=(0, 1))  # (D,): the head's mean over every position of the batch

    def ablate(module, args):
        x = args[0].clone()
        x[..., cut] = 0.0 if mode == "zero" else mean
        return (x,)

    handle = projection.register_forward_pre_hook(ablate)
    try:
        with torch.no_grad():
            return metric(theirs(ids).logits) - clean
    finally:
        handle.remove()


def _loss(ids):
    return lambda logits: float(F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten()))


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_loss_changes_match_a_pre_hook_on_transformers_output_projection(pair, mode):
    (ours, theirs), family = pair
    ids = random_ids(ours.config.vocab, (3, 10))
    table = head_ablation(ours, ids, mode)
    with torch.no_grad():
        assert abs(table.clean - _loss(ids)(theirs(ids).logits)) < 1e-4
    d_head = ours.config.d_model // ours.config.heads
    for layer in range(ours.config.decoder_layers):
        for head in range(ours.config.heads):
            theirs_delta = _their_delta(theirs, family, ids, layer, head, d_head, mode, _loss(ids))
            assert abs(table.values[layer][head] - theirs_delta) < 1e-4, (layer, head)
    assert max(abs(v) for row in table.values for v in row) > 1e-3  # the heads do matter here


def test_a_tokens_logit_as_the_metric(pair):
    (ours, theirs), family = pair
    ids = random_ids(ours.config.vocab, (1, 9), seed=4)
    table = head_ablation(ours, ids, "zero", Metric(token=5, position=-1))
    d_head = ours.config.d_model // ours.config.heads
    theirs_delta = _their_delta(theirs, family, ids, 1, 2, d_head, "zero", lambda logits: float(logits[0, -1, 5]))
    assert table.metric == "logit" and abs(table.values[1][2] - theirs_delta) < 1e-4
    ranked = table.to_dict()["ranked"]
    assert abs(ranked[0]["delta"]) == max(abs(v) for row in table.values for v in row)


def test_a_bad_mode_and_an_encoder_decoder_are_refused_in_one_line(pair):
    (ours, _), _ = pair
    with pytest.raises(ValueError, match="mode must be one of zero, mean"):
        head_ablation(ours, random_ids(ours.config.vocab, (1, 4)), "half")
    from tui_lab import build_model
    from tui_lab.config import ModelConfig

    seq2seq = build_model(ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16,
                                      heads=2, d_ff=16, vocab=20, positions="sinusoidal"))
    with pytest.raises(ValueError, match=r"^ablate: src \(the source ids\) is what an encoder-decoder reads"):
        head_ablation(seq2seq, torch.zeros(1, 3, dtype=torch.long))  # no source: one line saying what is missing


def test_a_tokens_logit_is_measured_on_every_row_not_the_first(pair):
    """Issue 40 item 1: the logit metric on a batch is each row's change, their mean and spread; it used to read
    row 0 alone (`logits[0, -1, tok]`), whose change can have the other sign than the batch's."""
    (ours, _), _ = pair
    ids = random_ids(ours.config.vocab, (3, 8), seed=7)
    table = head_ablation(ours, ids, "zero", Metric(token=5))
    alone = [head_ablation(ours, ids[n:n + 1], "zero", Metric(token=5)).values for n in range(3)]
    each = torch.tensor(alone, dtype=torch.float64).permute(1, 2, 0)  # (layers, heads, rows)
    assert torch.allclose(torch.tensor(table.values, dtype=torch.float64), each.mean(dim=-1), atol=1e-9)
    assert torch.allclose(torch.tensor(table.spread, dtype=torch.float64), each.std(dim=-1, unbiased=False),
                          atol=1e-9)
    assert torch.allclose(torch.tensor(table.per_row, dtype=torch.float64), each, atol=1e-9)
    assert not torch.allclose(each[..., 0], each.mean(dim=-1), atol=1e-3)  # the first row alone is not the batch
    loss = head_ablation(ours, ids, "zero")  # the loss too: the rows' mean is the batch's mean loss
    assert abs(loss.clean - _loss(ids)(ours(ids))) < 1e-9 and len(loss.per_row[0][0]) == 3
