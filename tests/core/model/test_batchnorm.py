"""norm 'batchnorm': per-feature statistics over the real tokens of (N, L), running stats in eval, counted exactly."""

import pytest
import torch
from torch import nn

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig
from tui_lab.model.batchnorm import MaskedBatchNorm
from tui_lab.model.masks import padding_mask


def _config(**changes) -> ModelConfig:
    return ModelConfig(family="decoder-only", encoder_layers=0, decoder_layers=2, d_model=16, heads=4, d_ff=32,
                       vocab=20, max_len=16, norm="batchnorm", dropout=0.0).replace(**changes)


def test_without_padding_it_is_torch_batchnorm_over_every_token():
    x = torch.randn(3, 5, 8)
    ours, theirs = MaskedBatchNorm(8), nn.BatchNorm1d(8)
    with torch.no_grad():
        ours.weight.uniform_(0.5, 1.5), ours.bias.uniform_(-1, 1)
        theirs.weight.copy_(ours.weight), theirs.bias.copy_(ours.bias)
    expected = theirs(x.transpose(1, 2)).transpose(1, 2)  # BatchNorm1d: (N, E, L), stats over N and L
    torch.testing.assert_close(ours(x), expected)
    torch.testing.assert_close(ours.running_mean, theirs.running_mean)
    torch.testing.assert_close(ours.running_var, theirs.running_var)
    ours.eval(), theirs.eval()
    torch.testing.assert_close(ours(x), theirs(x.transpose(1, 2)).transpose(1, 2))


def test_padding_is_left_out_of_the_statistics():
    keep = padding_mask([5, 2, 3])  # (3, 5)
    x = torch.randn(3, 5, 8)
    noisy = x.clone()
    noisy[~keep] = 1000.0  # whatever padding holds must not move the real tokens' outputs
    norm = MaskedBatchNorm(8)
    out, out_noisy = norm(x, keep), norm(noisy, keep)
    torch.testing.assert_close(out[keep], out_noisy[keep])
    real = x[keep]  # (10, 8): the statistics are those of the real tokens alone
    torch.testing.assert_close(out[keep], (real - real.mean(0)) / torch.sqrt(real.var(0, unbiased=False) + 1e-5))


def test_a_padded_batch_through_the_model_ignores_the_padding_in_training():
    torch.manual_seed(0)
    model = build_model(_config())
    ids, keep = torch.randint(0, 20, (2, 6)), padding_mask([6, 3], 6)
    other = ids.clone()
    other[~keep] = 7  # change only the padded ids
    a, b = model(ids, tgt_mask=keep), model(other, tgt_mask=keep)
    torch.testing.assert_close(a[keep], b[keep])


def test_cached_generation_matches_the_uncached_pass_in_eval():
    torch.manual_seed(0)
    model = build_model(_config())
    model(torch.randint(0, 20, (4, 8)))  # one training-mode pass so the running statistics are not the init
    model.eval()
    ids = torch.randint(0, 20, (1, 6))
    with torch.no_grad():
        full = model(ids)  # (1, 6, V)
        cache, steps = model.new_cache(1), []
        for i in range(6):
            steps.append(model.decode(ids[:, i:i + 1], cache=cache))
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_counted_exactly_and_buffers_are_not_parameters(bias):
    model = build_model(_config(bias=bias))
    assert sum(p.numel() for p in model.parameters()) == count_params(_config(bias=bias)).total
    assert any(name.endswith("running_var") for name, _ in model.named_buffers())


@pytest.mark.parametrize("changes, field", [({"family": "encoder-only", "encoder_layers": 2, "decoder_layers": 0,
                                              "embedding_norm": True}, "embedding norm"),
                                             ({"family": "encoder-only", "encoder_layers": 2, "decoder_layers": 0,
                                               "head": "mlm"}, "MLM head")])
def test_norms_that_never_see_the_padding_mask_are_refused_in_one_line(changes, field):
    with pytest.raises(ValueError, match=f"^norm 'batchnorm' cannot be the {field}"):
        _config(**changes)
