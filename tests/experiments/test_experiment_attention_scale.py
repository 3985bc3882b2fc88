"""attention-scale: unscaled scores spread as sqrt(d_head) and softmax saturates; scaled ones stay put."""

import math

import pytest

from tui_lab.experiments import get
from tui_lab.experiments.attention_scale import softmax_stats


def test_unscaled_softmax_saturates_as_d_head_grows_and_scaled_does_not():
    scaled = [softmax_stats(d, 64, True, 0) for d in (16, 256)]
    unscaled = [softmax_stats(d, 64, False, 0) for d in (16, 256)]
    assert all(s["score_std"] == pytest.approx(1.0, abs=0.1) for s in scaled)
    assert unscaled[1]["score_std"] == pytest.approx(16.0, rel=0.1)  # sqrt(256)
    assert abs(scaled[0]["entropy"] - scaled[1]["entropy"]) < 0.1 and scaled[1]["entropy"] < math.log(64)
    assert unscaled[1]["entropy"] < 0.5 < scaled[1]["entropy"] and unscaled[1]["max_weight"] > 0.8
    assert unscaled[0]["entropy"] > unscaled[1]["entropy"]


def test_a_tiny_run_trains_both_scales():
    exp = get("attention-scale")
    options = exp.resolve(sets={"d_heads": "16,64", "steps": "3", "batch_size": "2", "seq_len": "16", "d_model": "16",
                                "heads": "2", "layers": "1"})
    result = exp.run(options)
    assert [c.label for c in result.plots["loss"].curves] == ["scaled 1/sqrt(d_head)", "unscaled"]
    assert result.scalars["entropy_unscaled"] < result.scalars["entropy_scaled"]
    assert len(result.tables["softmax"].rows) == 2
