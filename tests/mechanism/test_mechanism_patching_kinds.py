"""Activation patching beyond resid_pre (TransformerLens's get_act_patch_* family) against patching one point at a
time by hand, with each metric; and the warning when the clean-corrupt gap cannot carry a recovery (issue 40)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.mechanism.patching import HEAD_KINDS, POINTS, PatchMetric, activation_patching, gap_warning

L = 5


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = ModelConfig(
        family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=30, max_len=16, dropout=0.0
    )
    return build_model(config).double().eval()


def _by_hand(model, clean, corrupt, metric, point: str, column: int, kind: str) -> float:
    """The recovery with the clean value restored at one position (or one head at every position), one pass."""
    _, cache = run_with_cache(model, clean[None], names=[point])
    saved = cache[point]

    def restore(value, _):
        value = value.clone()
        if kind == "z":
            value[:, :, column] = saved[:, :, column]
        elif kind == "pattern":
            value[:, column] = saved[:, column]
        else:
            value[:, column] = saved[:, column]
        return value

    with torch.no_grad():
        m_clean, m_corrupt = (float(metric(model(x[None]))[0]) for x in (clean, corrupt))
        patched = float(metric(run_with_hooks(model, corrupt[None], hooks=[(point, restore)]))[0])
    return (patched - m_corrupt) / (m_clean - m_corrupt)


@pytest.mark.parametrize("kind", list(POINTS))
@pytest.mark.parametrize("metric_kind", ["logit_diff", "logit", "loss"])
def test_every_kind_and_metric_equals_patching_one_point_by_hand(model, kind, metric_kind):
    gen = torch.Generator().manual_seed(3)
    clean, corrupt = torch.randint(0, 30, (L,), generator=gen), torch.randint(0, 30, (L,), generator=gen)
    metric = PatchMetric(metric_kind, 3, 7 if metric_kind == "logit_diff" else None)
    table = activation_patching(model, clean, corrupt, metric, kind)
    columns = model.config.heads if kind in HEAD_KINDS else L
    assert len(table.values) == 2 and all(len(row) == columns for row in table.values)
    assert table.columns == ("head" if kind in HEAD_KINDS else "position") and table.metric == metric_kind
    for layer in range(2):
        point = f"blocks.{layer}.{POINTS[kind]}"
        assert table.points[layer] == point
        for column in range(columns):
            expected = _by_hand(model, clean, corrupt, metric, point, column, kind)
            assert abs(table.values[layer][column] - expected) < 1e-9, (layer, column)
    assert max(abs(v) for row in table.values for v in row) > 1e-3  # the points do carry something here


def test_resid_post_of_the_last_layer_at_the_last_position_restores_everything(model):
    clean, corrupt = torch.tensor([1, 2, 3, 4, 5]), torch.tensor([1, 2, 9, 4, 5])
    table = activation_patching(model, clean, corrupt, PatchMetric("logit_diff", 3, 7), "resid_post")
    assert abs(table.values[-1][-1] - 1.0) < 1e-9 and abs(table.values[-1][0]) < 1e-9


def test_an_attention_only_model_has_no_mlp_out_and_says_so():
    attn_only = build_model(
        ModelConfig(family="decoder-only", decoder_layers=1, d_model=16, heads=2, vocab=10, max_len=8, ffn="none")
    ).eval()
    with pytest.raises(ValueError, match="^kind: this model has no hook_mlp_out"):
        activation_patching(attn_only, torch.tensor([1, 2]), torch.tensor([3, 2]), PatchMetric("logit", 1), "mlp_out")
    with pytest.raises(ValueError, match="^kind must be one of resid_pre"):
        activation_patching(attn_only, torch.tensor([1, 2]), torch.tensor([3, 2]), PatchMetric("logit", 1), "q")
    with pytest.raises(ValueError, match="^metric logit_diff needs a wrong answer"):
        PatchMetric("logit_diff", 1)


@pytest.mark.parametrize(
    "clean, corrupt, metric, expected",
    [
        (
            1.50,
            1.38,
            "logit_diff",
            "gap in logit difference is only 0.120 (clean 1.500, corrupt 1.380; the corrupted "
            "prompt still prefers the answer)",
        ),
        (0.40, 1.20, "logit_diff", "logit difference is not worse than the clean one's (clean 0.400, corrupt 1.200"),
        (2.00, 1.00, "loss", "loss is not worse than the clean one's"),
        (3.00, -1.00, "logit_diff", None),
        (1.00, 4.00, "loss", None),
    ],
)
def test_a_small_or_wrong_signed_gap_is_one_warning_line(clean, corrupt, metric, expected):
    line = gap_warning(PatchMetric(metric, 1, 2), clean, corrupt)
    if expected is None:
        assert line is None
    else:
        assert expected in line and "\n" not in line and line.startswith("warning: ")
