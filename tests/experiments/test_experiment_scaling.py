"""scaling: the fit recovers a known exponent, N counts no embeddings, and a tiny grid runs end to end."""

import math

import pytest

from tui_lab import build_model
from tui_lab.experiments import get
from tui_lab.experiments.scaling import fit_power_law, non_embedding_params
from tui_lab.experiments.training import lm_config


def test_the_fit_recovers_a_known_exponent_from_synthetic_points():
    ns = [1e3, 1e4, 1e5, 1e6, 1e7]
    fit = fit_power_law(ns, [(8.8e13 / n) ** 0.076 for n in ns])
    assert fit["alpha"] == pytest.approx(0.076, abs=1e-9) and fit["c"] == pytest.approx(8.8e13 ** 0.076)
    assert fit["r2"] == pytest.approx(1.0)
    noisy = fit_power_law(ns, [3 * n ** -0.3 * (1.01 if i % 2 else 0.99) for i, n in enumerate(ns)])
    assert noisy["alpha"] == pytest.approx(0.3, abs=0.01) and noisy["r2"] < 1.0


def test_one_size_cannot_be_fitted():
    with pytest.raises(ValueError, match="at least two models of different sizes"):
        fit_power_law([10, 10], [1.0, 2.0])


def test_non_embedding_params_leave_out_token_and_position_tables():
    options = get("scaling").resolve()
    config = lm_config(options, d_model=32, layers=2)
    model = build_model(config)
    embeddings = model.tok_embed.weight.numel() + model.pos_embed.weight.numel()
    assert non_embedding_params(config) == sum(p.numel() for p in model.parameters()) - embeddings


def test_a_tiny_grid_runs_and_fits(monkeypatch):
    exp = get("scaling")
    options = exp.resolve(sets={"widths": "8,16", "depths": "1", "heads": "2", "steps": "4", "batch_size": "2",
                                "seq_len": "16"})
    result = exp.run(options)
    rows = result.tables["models"].rows
    assert [r[:2] for r in rows] == [[8, 1], [16, 1]] and rows[0][2] < rows[1][2]
    assert math.isfinite(result.scalars["alpha"]) and len(result.plots["loss"].curves) == 2
    assert result.plots["fit"].curves[-1].label.startswith("fit alpha=")


def test_widths_must_split_into_heads():
    with pytest.raises(ValueError, match=r"widths \(30\) must each be divisible by heads \(4\)"):
        get("scaling").resolve(sets={"widths": "30,64"})
