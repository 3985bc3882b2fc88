"""The model's Linear: nn.Linear's numbers on oneDNN's GEMM in a training pass (where the probe or TUI_LAB_GEMM picks
it), nn.Linear's own pass bit for bit everywhere else, and the probe asked once."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tui_lab import build_model, load_preset
from tui_lab.model import linear
from tui_lab.model.linear import Linear

onednn = pytest.mark.skipif(linear.onednn_linear() is None, reason="this torch has no oneDNN linear")


def _pair(bias: bool, seed: int = 0) -> tuple[nn.Linear, Linear]:
    torch.manual_seed(seed)
    plain = nn.Linear(48, 80, bias=bias)
    ours = Linear(48, 80, bias=bias)
    ours.load_state_dict(plain.state_dict())
    return plain, ours


def _grads(module: nn.Module, x: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, ...]:
    x = x.detach().clone().requires_grad_()
    module.zero_grad(set_to_none=True)
    out = module(x)
    (out * weight).sum().backward()
    bias = module.bias.grad if module.bias is not None else torch.zeros(())
    return out.detach(), x.grad, module.weight.grad, bias


@onednn
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(37, 48), (3, 11, 48), (2, 3, 5, 48)])
def test_the_onednn_training_pass_gives_nn_linears_numbers(monkeypatch, bias, shape):
    monkeypatch.setenv("TUI_LAB_GEMM", "onednn")
    plain, ours = _pair(bias)
    gen = torch.Generator().manual_seed(1)
    x, weight = torch.randn(*shape, generator=gen), torch.randn(*shape[:-1], 80, generator=gen)
    for expected, got in zip(_grads(plain, x, weight), _grads(ours, x, weight), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@onednn
def test_a_strided_input_and_a_frozen_weight(monkeypatch):
    """A transposed view in (the kernel reads it contiguous), and a frozen weight: only x's gradient."""
    monkeypatch.setenv("TUI_LAB_GEMM", "onednn")
    plain, ours = _pair(True)
    for module in (plain, ours):
        module.weight.requires_grad_(False)
    x = torch.randn(48, 9, generator=torch.Generator().manual_seed(2)).t()
    got, expected = _grads(ours, x, torch.ones(9, 80)), _grads(plain, x, torch.ones(9, 80))
    torch.testing.assert_close(got[:2], expected[:2], rtol=1e-5, atol=1e-5)
    assert ours.weight.grad is None


@pytest.mark.parametrize("gemm", ["onednn", "blas"])
def test_a_pass_without_gradients_is_nn_linears_bit_for_bit(monkeypatch, gemm):
    """Generation and the app's captures run without gradients: the same bits as nn.Linear, whichever GEMM
    training uses (cached and uncached generation compare token for token)."""
    monkeypatch.setenv("TUI_LAB_GEMM", gemm)
    plain, ours = _pair(True)
    x = torch.randn(4, 7, 48, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.equal(ours(x), plain(x))
    with torch.inference_mode():
        assert torch.equal(ours(x), plain(x))


def test_blas_forced_is_nn_linear_bit_for_bit_in_training(monkeypatch):
    monkeypatch.setenv("TUI_LAB_GEMM", "blas")
    plain, ours = _pair(True)
    x, weight = torch.randn(6, 48), torch.randn(6, 80)
    for expected, got in zip(_grads(plain, x, weight), _grads(ours, x, weight), strict=True):
        assert torch.equal(got, expected)


def test_the_probe_is_asked_once_and_the_variable_overrides_it(monkeypatch):
    monkeypatch.delenv("TUI_LAB_GEMM", raising=False)
    asked = []
    monkeypatch.setattr(linear, "_choice", None)
    monkeypatch.setattr(linear, "_probe", lambda: asked.append(1) or True)
    assert linear.onednn_faster() is True and linear.onednn_faster() is True and asked == [1]
    monkeypatch.setenv("TUI_LAB_GEMM", "blas")
    assert linear.onednn_faster() is False and asked == [1]
    monkeypatch.setattr(linear, "_choice", None)
    monkeypatch.setattr(linear, "onednn_linear", lambda: None)
    monkeypatch.setenv("TUI_LAB_GEMM", "onednn")
    assert linear.onednn_faster() is False  # no oneDNN in this torch: the BLAS, whatever was asked


def test_the_real_probe_answers():
    assert linear._probe() in (True, False)


@onednn
@pytest.mark.parametrize("preset", ["gpt2-toy", "transformer-2017-toy"])
def test_a_training_step_on_either_gemm_gives_the_same_loss_and_weights(monkeypatch, preset):
    """A toy's training pass (every Linear of attention, the FFN and the head): the same loss and gradients on
    oneDNN as on the BLAS, to float rounding (the gradients, not AdamW's first step: it moves each weight by
    lr * sign(gradient), so a gradient of ~1e-9 either side of 0 moves it 2 lr apart on either GEMM)."""
    config = load_preset(preset, dropout=0.0)
    results = []
    for gemm in ("blas", "onednn"):
        monkeypatch.setenv("TUI_LAB_GEMM", gemm)
        torch.manual_seed(0)
        model = build_model(config).train()
        gen = torch.Generator().manual_seed(4)
        ids = torch.randint(4, config.vocab, (2, 13), generator=gen)
        if config.family == "encoder-decoder":
            logits = model(ids[:, :9], ids[:, :-1])
        else:
            logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (loss_b, grads_b), (loss_o, grads_o) = results
    torch.testing.assert_close(loss_o, loss_b, rtol=1e-5, atol=1e-6)
    assert len(grads_o) == len(grads_b) > 10
    for a, b in zip(grads_o, grads_b, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
