import math

import pytest

from tui_lab.train import TrainConfig
from tui_lab.train.schedules import learning_rate


def test_noam_is_the_papers_formula_scaled_by_lr():
    c = TrainConfig(schedule="noam", lr=2.0, warmup=4000, steps=100_000)
    for step in (0, 99, 3999, 4000, 20_000):
        s = step + 1
        assert learning_rate(step, c, 512) == pytest.approx(2.0 * 512**-0.5 * min(s**-0.5, s * 4000**-1.5))
    peak = learning_rate(3999, c, 512)
    assert peak == pytest.approx(2.0 * 512**-0.5 * 4000**-0.5)
    assert learning_rate(1999, c, 512) == pytest.approx(peak / 2)  # linear warmup
    assert learning_rate(15_999, c, 512) == pytest.approx(peak / 2)  # inverse square root after


def test_cosine_warms_up_then_ends_at_min_lr():
    c = TrainConfig(schedule="cosine", lr=1e-3, min_lr=1e-5, warmup=10, steps=110)
    assert learning_rate(0, c, 64) == pytest.approx(1e-4)
    assert learning_rate(9, c, 64) == pytest.approx(1e-3)
    assert learning_rate(60, c, 64) == pytest.approx(1e-5 + 0.5 * (1e-3 - 1e-5))
    assert learning_rate(110, c, 64) == pytest.approx(1e-5)
    rates = [learning_rate(s, c, 64) for s in range(10, 111)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))


def test_constant_with_and_without_warmup():
    assert learning_rate(500, TrainConfig(schedule="constant", lr=0.01, warmup=0), 64) == 0.01
    c = TrainConfig(schedule="constant", lr=0.01, warmup=4)
    assert [learning_rate(s, c, 64) for s in range(5)] == pytest.approx([0.0025, 0.005, 0.0075, 0.01, 0.01])
    assert not math.isnan(learning_rate(0, c, 64))
