"""activation = none (seed 002's Q&A): the FFN collapses to one linear map W_down W_up, counted exactly."""

import pytest
import torch

from tui_lab.analysis import count_params
from tui_lab.cli import main
from tui_lab.config import ModelConfig
from tui_lab.model import build_model
from tui_lab.model.feed_forward import FeedForward
from tui_lab.model.ffn_rank import effective_rank, equivalent_linear, ffn_ranks


def config(**changes) -> ModelConfig:
    return ModelConfig(family="encoder-decoder", encoder_layers=2, decoder_layers=1, d_model=32, heads=2, d_ff=8,
                       vocab=40, max_len=32, activation="none").replace(**changes)


@pytest.mark.parametrize("bias", [True, False])
def test_ffn_without_activation_is_one_linear_map(bias):
    torch.manual_seed(0)
    ffn = FeedForward(config(bias=bias))
    x = torch.randn(3, 5, 32)
    w, b = equivalent_linear(ffn)
    assert w.shape == (32, 32)
    single = x @ w.T + (b if b is not None else 0)
    assert torch.allclose(ffn(x), single, atol=1e-5)
    assert torch.allclose(ffn(x), ffn.down(ffn.up(x)))  # down(up(x)): nothing in between
    assert (b is None) == (not bias)


@pytest.mark.parametrize("family", ["encoder-decoder", "decoder-only", "encoder-only"])
def test_counts_exactly(family):
    layers = {"encoder-decoder": (1, 1), "decoder-only": (0, 2), "encoder-only": (2, 0)}[family]
    c = config(family=family, encoder_layers=layers[0], decoder_layers=layers[1])
    model = build_model(c)
    assert count_params(c).total == sum(p.numel() for p in model.parameters())
    # the same parameters as ReLU: the activation has none
    assert count_params(c).total == count_params(c.replace(activation="relu")).total


def test_rank_is_at_most_min_of_d_model_and_d_ff():
    torch.manual_seed(0)
    ranks = ffn_ranks(build_model(config()))  # d_ff 8 < d_model 32: a bottleneck
    assert [(r.stack, r.layer) for r in ranks] == [("encoder", 0), ("encoder", 1), ("decoder", 0)]
    assert all(r.rank == 8 == r.bound and 1 <= r.effective_rank <= 8 for r in ranks)
    wide = ffn_ranks(build_model(config(d_ff=64)))
    assert all(r.rank <= 32 and r.bound == 32 for r in wide)
    assert "rank 8 (at most min(E, F) = 8)" in ranks[0].line()


def test_effective_rank_counts_equal_directions():
    assert effective_rank(torch.tensor([2.0, 2.0, 2.0, 0.0])) == pytest.approx(3.0)
    assert effective_rank(torch.tensor([1.0, 0.0])) == pytest.approx(1.0)
    assert effective_rank(torch.zeros(3)) == 0.0


def test_nonlinear_ffn_has_no_single_matrix():
    for activation in ("relu", "swiglu"):
        model = build_model(config(activation=activation))
        with pytest.raises(ValueError, match="^activation"):
            ffn_ranks(model)
        with pytest.raises(ValueError, match="^activation"):
            equivalent_linear(model.encoder[0].ffn)


def test_cli_accepts_none_and_refuses_a_bad_value(capsys):
    assert main(["info", "--preset", "transformer-2017-toy", "--set", "activation=none", "--json"]) == 0
    capsys.readouterr()
    assert main(["info", "--preset", "transformer-2017-toy", "--set", "activation=linear"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "activation ('linear') must be one of" in err and "none" in err


def test_gpt2_export_refuses_it_in_one_line():
    from tui_lab.hf.config import check_exportable

    with pytest.raises(ValueError, match="^cannot export as GPT-2: activation is 'none'"):
        check_exportable(ModelConfig(activation="none"))


def test_each_expert_of_a_mixture_is_its_own_matrix():
    model = build_model(config(ffn="moe", experts=2, experts_per_token=1))
    ranks = ffn_ranks(model)
    where = [(r.stack, r.layer, r.expert) for r in ranks]
    assert where[:3] == [("encoder", 0, 0), ("encoder", 0, 1), ("encoder", 1, 0)]
    assert len(ranks) == 3 * 2 and all(r.rank == 8 for r in ranks) and "expert 1" in ranks[1].line()
