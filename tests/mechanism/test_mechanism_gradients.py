"""Backward hooks and attribution patching (issue 40, what to add 2): the gradients the hooks see against central
differences of the metric, a replaced gradient reaching earlier points, frozen weights; attribution patching as
the first-order term of activation patching (the derivative of the patched metric along clean - corrupt)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.attribution_patching import attribution_patching
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.mechanism.gradients import run_with_backward_hooks, run_with_gradients
from tui_lab.mechanism.patching import HEAD_KINDS, POINTS, PatchMetric, activation_patching

CLEAN, CORRUPT = torch.tensor([4, 8, 15, 16, 23, 9]), torch.tensor([4, 8, 2, 16, 23, 9])
METRIC = PatchMetric("logit_diff", 3, 7)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(2)
    config = ModelConfig(
        family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=30, max_len=16, dropout=0.0
    )
    return build_model(config).double().eval()


def _metric_with(model, point: str, shift: torch.Tensor, ids=CORRUPT) -> float:
    with torch.no_grad():
        return float(METRIC(run_with_hooks(model, ids[None], hooks=[(point, lambda v, _: v + shift)]))[0])


@pytest.mark.parametrize(
    "point",
    [
        "blocks.0.hook_resid_pre",
        "blocks.1.attn.hook_z",
        "blocks.0.attn.hook_pattern",
        "blocks.1.hook_mlp_out",
        "blocks.0.mlp.hook_post",
    ],
)
def test_the_gradients_are_the_metrics_central_differences(model, point):
    value, acts, grads = run_with_gradients(model, CORRUPT[None], metric=METRIC, names=[point])
    direction = torch.randn(acts[point].shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    eps = 1e-5
    slope = (_metric_with(model, point, eps * direction) - _metric_with(model, point, -eps * direction)) / (2 * eps)
    assert abs(value - _metric_with(model, point, 0 * direction)) < 1e-12
    assert abs(float((grads[point] * direction).sum()) - slope) < 1e-6 * max(1.0, abs(slope))
    assert grads[point].abs().max() > 0


def test_a_replaced_gradient_flows_on_and_frozen_weights_still_get_gradients(model):
    last, first = "blocks.1.hook_resid_post", "blocks.0.hook_resid_pre"
    seen = {}
    run_with_backward_hooks(
        model,
        CORRUPT[None],
        metric=METRIC,
        hooks=[(last, lambda g, _: torch.zeros_like(g)), (first, lambda g, name: seen.setdefault(name, g))],
    )
    assert seen[first].abs().max() == 0  # every path to the logits runs through the last resid_post
    model.requires_grad_(False)
    try:
        _, _, grads = run_with_gradients(model, CORRUPT[None], metric=METRIC, names=[first])
    finally:
        model.requires_grad_(True)
    assert grads[first].abs().max() > 0 and all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("kind", list(POINTS))
def test_attribution_patching_is_the_first_order_term_of_activation_patching(model, kind):
    """d/de m(corrupt with a = a_corrupt + e (a_clean - a_corrupt)) at e = 0, normalised like the recovery, is
    attribution patching's value, for every point and column."""
    table = attribution_patching(model, CLEAN, CORRUPT, METRIC, kind)
    real = activation_patching(model, CLEAN, CORRUPT, METRIC, kind)
    assert table.kind == f"attribution {kind}" and table.columns == real.columns
    points = real.points
    _, clean = run_with_cache(model, CLEAN[None], names=points)
    _, corrupt = run_with_cache(model, CORRUPT[None], names=points)
    eps, gap = 1e-5, real.ld_clean - real.ld_corrupt
    for layer, point in enumerate(points):
        for column in range(len(real.values[layer])):
            diff = torch.zeros_like(clean[point])
            where = (slice(None), slice(None), column) if kind == "z" else (slice(None), column)
            diff[where] = (clean[point] - corrupt[point])[where]
            slope = (_metric_with(model, point, eps * diff) - _metric_with(model, point, -eps * diff)) / (2 * eps)
            assert abs(table.values[layer][column] - slope / gap) < 1e-6, (point, column)
    columns = model.config.heads if kind in HEAD_KINDS else len(CLEAN)
    assert all(len(row) == columns for row in table.values)
