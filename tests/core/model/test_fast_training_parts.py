"""The training pass's cheaper parts give autograd's numbers: SwiGLU's silu(gate) * up and RoPE on the q|k slab bit
for bit (forward and gradients), the uniform-draw dropout keeps 1 - p and scales by 1 / (1 - p), and attention with
dropout (its own path) is SDPA's when nothing is dropped."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tui_lab import build_model, load_preset
from tui_lab.model.feed_forward import silu_gate
from tui_lab.model.positions import apply_rope, apply_rope_full, rope_angles, rope_full_tables, rope_turns
from tui_lab.model.scaled_dot import attend, dropout


@pytest.mark.parametrize("leaves", [True, False])  # a caller's tensors, or projections' outputs (reused)
def test_silu_gate_is_autograds_silu_times_up_bit_for_bit(leaves):
    gen = torch.Generator().manual_seed(0)
    gate0, up0, weight = (torch.randn(3, 5, 24, generator=gen) for _ in range(3))
    gate0.requires_grad_(), up0.requires_grad_()
    plain = F.silu(gate0) * up0
    (plain * weight).sum().backward()
    expected = gate0.grad.clone(), up0.grad.clone()
    gate0.grad = up0.grad = None
    gate, up = (gate0, up0) if leaves else (gate0 * 1, up0 * 1)
    fused = silu_gate(gate, up)
    (fused * weight).sum().backward()
    assert torch.equal(plain, fused)
    assert torch.equal(expected[0], gate0.grad) and torch.equal(expected[1], up0.grad)
    if leaves:  # the caller's tensors are as they were
        assert torch.equal(plain, F.silu(gate0) * up0)


@pytest.mark.parametrize("d_head", [16, 10, 32, 64, 128])
@pytest.mark.parametrize("complex_turns", [False, True])
def test_rope_on_the_slab_is_apply_rope_bit_for_bit_with_gradients(d_head, complex_turns):
    """The real form, and the complex one where the pairs fill whole vectors (10: a tail, the real form again),
    on a strided slab as the projection gives it (q|k of a q|k|v row)."""
    gen = torch.Generator().manual_seed(d_head)
    length, start = 9, 5
    cos, sin = rope_angles(d_head, torch.arange(start + length))
    cos2, sin2 = rope_full_tables(cos, sin)
    turns = rope_turns(cos, sin)[start:, None] if complex_turns else None
    cos, sin, cos2, sin2 = cos[start:], sin[start:], cos2[start:], sin2[start:]
    row = torch.randn(2, length, 8 * d_head, generator=gen, requires_grad=True)  # (N, L, (H + K + K) * D)
    x = row[..., : 6 * d_head].unflatten(-1, (6, d_head))  # (N, L, H + K, D)
    weight = torch.randn(2, length, 6, d_head, generator=gen)
    pairs = apply_rope(x.transpose(1, 2), cos, sin).transpose(1, 2)
    (pairs * weight).sum().backward()
    expected = row.grad.clone()
    row.grad = None
    full = apply_rope_full(x, cos2[:, None], sin2[:, None], turns)
    (full * weight).sum().backward()
    assert torch.equal(pairs, full) and torch.equal(expected, row.grad)
    with torch.no_grad():
        assert torch.equal(apply_rope_full(x, cos2[:, None], sin2[:, None], turns), full)


def test_dropout_keeps_one_minus_p_scaled():
    torch.manual_seed(2)
    out = dropout(torch.ones(200_000), 0.3)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.01
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / 0.7))
    assert torch.equal(dropout(torch.ones(4), 1.0), torch.zeros(4))


def test_attention_with_dropout_is_sdpa_when_nothing_is_dropped():
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, 7, 8, generator=gen)
    k, v = torch.randn(2, 2, 7, 8, generator=gen), torch.randn(2, 2, 7, 8, generator=gen)  # grouped-query
    for causal in (True, False):
        reference, _ = attend(q, k, v, causal=causal)
        dropped, _ = attend(q, k, v, causal=causal, dropout_p=1e-12)
        assert torch.allclose(reference, dropped, atol=1e-6)


def test_a_llama_shaped_training_pass_is_unchanged_by_the_slab_path():
    """The hooked pass (per-head q/k/v points, RoPE per tensor) and the plain one agree in training."""
    from tui_lab.model.hooks import Hooks, attached

    torch.manual_seed(4)
    model = build_model(load_preset("llama-toy", dropout=0.0)).train()
    ids = torch.randint(model.config.vocab, (2, 12))
    plain = model(ids)
    with attached(model, Hooks([("blocks.0.attn.hook_q", lambda x, _: x)])):
        hooked = model(ids)
    assert torch.allclose(plain, hooked, atol=1e-6)


def test_rms_norm_is_torchs_forward_bit_for_bit_and_autograds_gradients():
    """The closed-form backward (model/rms_norm.py) against autograd through nn.RMSNorm, on seeded shapes and
    weights; no-grad and half-precision passes are torch's own."""
    from torch import nn

    from tui_lab.model.rms_norm import RMSNorm

    for seed in range(12):
        gen = torch.Generator().manual_seed(seed)
        size = int(torch.randint(1, 96, (1,), generator=gen))
        shape = (int(torch.randint(1, 4, (1,), generator=gen)), int(torch.randint(1, 9, (1,), generator=gen)), size)
        eps = [None, 1e-6, 1e-5][seed % 3]
        ours, theirs = RMSNorm(size, eps=eps), nn.RMSNorm(size, eps=eps)
        with torch.no_grad():
            ours.weight.copy_(torch.randn(size, generator=gen) * 3)
            theirs.weight.copy_(ours.weight)
        x = (torch.randn(*shape, generator=gen) * 10 ** float(torch.rand(1, generator=gen) * 4 - 2)).requires_grad_()
        grad = torch.randn(*shape, generator=gen)
        expected = theirs(x)
        expected.backward(grad)
        x_grad, x.grad = x.grad, None
        out = ours(x)
        out.backward(grad)
        assert torch.equal(out, expected), seed
        assert torch.allclose(x.grad, x_grad, rtol=1e-4, atol=1e-5 * x_grad.abs().max()), seed
        assert torch.allclose(ours.weight.grad, theirs.weight.grad, rtol=1e-4, atol=1e-5), seed
        with torch.no_grad():
            assert torch.equal(ours(x), theirs(x))
