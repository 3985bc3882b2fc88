"""length-extrapolation: RoPE's score depends on m - n only; every scheme is measured past its training length."""

import math

import pytest

from tui_lab.experiments import get
from tui_lab.experiments.length_extrapolation import SCHEMES, rope_scores


def test_rope_score_depends_only_on_the_distance():
    scores = rope_scores(16, 12, seed=0)  # the model's float32 angles: equal up to their rounding
    assert scores[3, 1].item() == pytest.approx(scores[10, 8].item(), rel=1e-6)
    for d in (-3, 0, 2, 5):  # every diagonal is constant ...
        diagonal = [scores[m, m - d].item() for m in range(max(d, 0), min(12, 12 + d))]
        assert max(diagonal) - min(diagonal) < 1e-5
    assert abs(scores[3, 1].item() - scores[3, 2].item()) > 1e-3  # ... and the distance does change it


def test_a_tiny_run_measures_every_scheme_past_the_training_length():
    exp = get("length-extrapolation")
    options = exp.resolve(sets={"steps": "3", "batch_size": "2", "seq_len": "8", "d_model": "16", "heads": "2",
                                "layers": "1", "eval_batches": "1", "bin": "2", "grid": "12"})
    result = exp.run(options)
    plot = result.plots["position_loss"]
    assert [c.label for c in plot.curves] == list(SCHEMES)
    assert all(c.xs == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] for c in plot.curves)
    assert all(math.isfinite(y) for c in plot.curves for y in c.ys)  # learned too: clamped, not refused
    assert result.scalars["rope_score_3_1"] == pytest.approx(result.scalars["rope_score_10_8"], abs=1e-6)
    assert len(result.grids["rope_scores"].values) == 12
    assert [row[0] for row in result.tables["summary"].rows] == list(SCHEMES)


def test_odd_d_head_is_refused_in_one_line():
    with pytest.raises(ValueError, match="must be even"):
        get("length-extrapolation").resolve(sets={"d_model": "18", "heads": "2"})
