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
