import math

import torch

from tui_lab.model.positions import alibi_slopes, apply_rope, rope_angles, sinusoidal_table


def test_sinusoidal_formula():
    pe = sinusoidal_table(50, 16)
    pos, i = 7, 3
    assert math.isclose(pe[pos, 2 * i].item(), math.sin(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6)
    assert math.isclose(pe[pos, 2 * i + 1].item(), math.cos(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6)


def test_sinusoidal_shift_rotates_each_pair_by_a_fixed_angle():
    pe, d, k = sinusoidal_table(64, 16), 16, 5
    for i in range(d // 2):
        theta = k / 10000 ** (2 * i / d)
        rotation = torch.tensor([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
        pairs = pe[:, 2 * i : 2 * i + 2]  # (sin, cos) at each position
        assert torch.allclose(pairs[:-k] @ rotation, pairs[k:], atol=1e-4)


def test_rope_score_depends_only_on_distance_and_keeps_the_norm():
    torch.manual_seed(0)
    cos, sin = rope_angles(64, torch.arange(32))
    q, k = torch.randn(64), torch.randn(64)

    def score(m, n):
        return (apply_rope(q, cos[m], sin[m]) * apply_rope(k, cos[n], sin[n])).sum()

    assert torch.allclose(score(3, 1), score(10, 8), atol=1e-4)
    assert not torch.allclose(score(3, 1), score(10, 5), atol=1e-4)
    assert torch.allclose(apply_rope(q, cos[7], sin[7]).norm(), q.norm())


def test_alibi_slopes_follow_press_et_al():
    assert torch.allclose(alibi_slopes(8), torch.tensor([2 ** -(i + 1) for i in range(8)]))
    assert len(alibi_slopes(12)) == 12


def _rope_pairwise(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def test_rope_as_complex_products_is_the_pairwise_rotation_with_its_gradient():
    """float32 rotates pairs as complex numbers (one kernel each way); the products are the pairwise ones (to an
    ulp: a scalar tail may fuse a multiply-add), on strided views of a fused projection as on contiguous rows,
    and bfloat16 (no complex type) takes the pairwise path."""
    torch.manual_seed(0)
    for shape in [(2, 3, 5, 8), (1, 4, 1, 16), (3, 2, 9, 64)]:
        qkv = torch.randn(shape[0], shape[2], 3 * shape[1] * shape[3], requires_grad=True)
        x = qkv[..., shape[1] * shape[3]:2 * shape[1] * shape[3]].unflatten(-1, (shape[1], shape[3])).transpose(1, 2)
        cos, sin = rope_angles(shape[-1], torch.arange(3, 3 + shape[2]))
        out, expected = apply_rope(x, cos, sin), _rope_pairwise(x, cos, sin)
        torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)
        grad = torch.randn_like(out)
        torch.testing.assert_close(torch.autograd.grad(out, qkv, grad)[0], torch.autograd.grad(expected, qkv, grad)[0],
                                   rtol=1e-6, atol=1e-6)
    half = torch.randn(2, 2, 5, 8).bfloat16()
    cos, sin = rope_angles(8, torch.arange(5))
    assert torch.equal(apply_rope(half, cos, sin), _rope_pairwise(half, cos.bfloat16(), sin.bfloat16()))
