"""The logit lens against transformers: hidden_states[i] (i < L) is the stream before block i, and the lens
there is lm_head(final_norm(hidden_states[i])); the lens after the last block is the logits."""

from __future__ import annotations

import pytest
import torch
from mechanism_fixtures import gpt2_pair, llama_pair, random_ids

from tui_lab.data.byte_codec import ByteCodec
from tui_lab.mechanism.lens import lens_logits, logit_lens

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module", params=["gpt2", "llama-gqa"])
def pair(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    return (gpt2_pair if request.param == "gpt2" else llama_pair)(folder), request.param


def _final_norm(theirs, family: str):
    return theirs.transformer.ln_f if family == "gpt2" else theirs.model.norm


def test_the_lens_equals_transformers_hidden_states_through_the_final_norm(pair):
    (ours, theirs), family = pair
    ids = random_ids(ours.config.vocab, (2, 11))
    points, lens = lens_logits(ours, ids)
    with torch.no_grad():
        out = theirs(ids, output_hidden_states=True)
        layers = ours.config.decoder_layers
        assert len(out.hidden_states) == layers + 1 == len(points)
        for i in range(layers):
            expected = theirs.lm_head(_final_norm(theirs, family)(out.hidden_states[i]))
            assert (lens[i] - expected).abs().max() < 1e-5, points[i]
        # the last entry has the final norm applied already: the lens after the last block is the logits
        assert (lens[-1] - theirs.lm_head(out.hidden_states[-1])).abs().max() < 1e-5
        assert (lens[-1] - out.logits).abs().max() < 1e-5
    assert not torch.allclose(lens[0], lens[-1])  # the layers do change the prediction


def test_the_lens_table_lists_the_top_tokens_and_the_next_tokens_probability(pair):
    (ours, _), _ = pair
    ids = random_ids(ours.config.vocab, (7,), seed=3).tolist()
    codec = ByteCodec(ours.config.vocab)
    table = logit_lens(ours, codec, ids, k=3)
    _, lens = lens_logits(ours, torch.tensor([ids]))
    probs = torch.softmax(lens[:, 0], dim=-1)
    data = table.to_dict()
    assert [row["point"] for row in data["rows"]] == table.points
    cell = data["rows"][1]["cells"][4]
    assert cell["top_id"] == int(probs[1, 4].argmax()) and len(cell["top_k"]) == 3
    assert abs(cell["top_prob"] - float(probs[1, 4].max())) < 1e-9
    assert [c["prob"] for c in cell["top_k"]] == sorted((c["prob"] for c in cell["top_k"]), reverse=True)
    assert abs(cell["next_prob"] - float(probs[1, 4, ids[5]])) < 1e-9
    assert data["rows"][0]["cells"][-1]["next_prob"] is None
