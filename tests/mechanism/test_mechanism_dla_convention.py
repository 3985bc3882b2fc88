"""Direct logit attribution in TransformerLens's convention (issue 40 item 4) against the lab's on weights folded
the way TransformerLens folds them: each head's constant value term (ln1.b W_V + b_V) moved into the output bias
b_O and W_U centred over the vocabulary. The folded model computes the same distribution, and the lab's DLA of it
is the "tl" DLA of the original."""

from __future__ import annotations

import copy

import pytest
import torch
from mechanism_fixtures import gpt2_pair, random_ids

from tui_lab.mechanism.attribution import head_logit_attribution, value_constant
from tui_lab.mechanism.heads import output_slice

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    ours, _ = gpt2_pair(tmp_path_factory.mktemp("gpt2"))
    with torch.no_grad():  # the fixture's biases are small: make the constant value terms count
        for block in ours.decoder:
            block.attn_norm.bias.normal_(0, 0.5, generator=torch.Generator().manual_seed(2))
            block.attn.qkv.bias.normal_(0, 0.5, generator=torch.Generator().manual_seed(3))
    return ours


def folded_as_transformer_lens(model) -> torch.nn.Module:
    """A copy with every value vector's constant zeroed (b_V := -ln1.b W_V), the same total written by b_O, and
    W_U (untied) centred over the vocabulary: the same softmax, the same logit differences."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for block in twin.decoder:
            attn, e = block.attn, block.attn.out.weight.shape[0]
            const = value_constant(block)  # (H, D)
            attn.out.bias += sum(const[h] @ output_slice(block, h) for h in range(attn.heads))
            attn.qkv.bias[2 * e : 3 * e] -= const.flatten()
        w = twin.lm_head.weight.detach().clone()
        twin.lm_head.weight = torch.nn.Parameter(w - w.mean(dim=0, keepdim=True))
    return twin


def test_the_tl_convention_is_the_labs_on_the_folded_weights(model):
    ids = random_ids(model.config.vocab, (9,), seed=5)
    twin = folded_as_transformer_lens(model)
    with torch.no_grad():
        a, b = model(ids[None])[0, -1], twin(ids[None])[0, -1]
    assert torch.allclose(torch.softmax(a, -1), torch.softmax(b, -1), atol=1e-10)  # the fold changes no output
    for answer, wrong in [(5, 9), (5, None), (17, None)]:
        tl = head_logit_attribution(model, ids, answer, wrong, convention="tl")
        lab_of_folded = head_logit_attribution(twin, ids, answer, wrong)
        assert torch.allclose(tl, lab_of_folded, atol=1e-10), (answer, wrong)
        lab = head_logit_attribution(model, ids, answer, wrong)
        assert (tl - lab).abs().max() > 1e-3  # the conventions do differ here


def test_a_bad_convention_is_one_line(model):
    with pytest.raises(ValueError, match="^convention must be one of lab, tl, not 'hf'"):
        head_logit_attribution(model, random_ids(model.config.vocab, (6,)), 5, 9, convention="hf")


def test_attribute_convention_tl_on_the_command_line(capsys):
    import json

    from cli_support import run_cli

    from tui_lab.loading import load_model

    prompt = "Anna walked to the river. Tom walked to the"
    out = run_cli(
        capsys,
        "attribute",
        "--preset",
        "gpt2-toy-english",
        "--prompt",
        prompt,
        "--answer",
        " river",
        "--convention",
        "tl",
        "--json",
    )
    data = json.loads(out.stdout)
    loaded = load_model("preset", "gpt2-toy-english")
    ids = torch.tensor(loaded.codec.encode(prompt))
    tl = head_logit_attribution(loaded.model, ids, loaded.codec.encode(" river")[0], convention="tl")
    assert data["convention"] == "tl" and torch.allclose(torch.tensor(data["head_attribution"]), tl, atol=1e-6)
    lab = head_logit_attribution(loaded.model, ids, loaded.codec.encode(" river")[0])
    assert (tl - lab).abs().max() > 0.1  # a single token: W_U centred moves every head
