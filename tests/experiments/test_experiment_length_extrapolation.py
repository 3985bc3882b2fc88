"""length-extrapolation: RoPE's score depends on m - n only; every scheme is measured past its training length."""

import math

import pytest
import torch

from tui_lab.experiments import get
from tui_lab.experiments.length_extrapolation import SCHEMES, ClampedRows, gap_line, rope_scores
from tui_lab.model.positions import LearnedPositions, alibi_bias


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
    assert {"relative", "t5"} <= set(SCHEMES)  # issue 27: the relative kinds beside the four
    assert all(c.xs == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] for c in plot.curves)
    assert all(math.isfinite(y) for c in plot.curves for y in c.ys)  # learned too: clamped, not refused
    assert result.scalars["rope_score_3_1"] == pytest.approx(result.scalars["rope_score_10_8"], abs=1e-6)
    assert len(result.grids["rope_scores"].values) == 12
    assert [row[0] for row in result.tables["summary"].rows] == list(SCHEMES)
    for scheme in SCHEMES:  # the gap the note states is the table's longer - seen
        gap = result.scalars[f"{scheme}_longer"] - result.scalars[f"{scheme}_seen"]
        assert result.scalars[f"{scheme}_past_minus_seen"] == pytest.approx(gap, abs=2e-4)
    assert result.notes[0].startswith("past length 8 (loss there minus within it, nats): learned ")


def test_sinusoidal_gets_the_papers_embedding_scale_and_no_scheme_ties():
    from tui_lab.experiments.length_extrapolation import CHANGES
    from tui_lab.experiments.training import lm_config

    options = get("length-extrapolation").resolve()
    assert CHANGES == {"sinusoidal": {"embedding_scale": "sqrt_d_model"}}  # the 2017 pairing, by the axis
    config = lm_config(options, positions="sinusoidal", tie_embeddings=False, **CHANGES["sinusoidal"])
    assert config.embedding_scale == "sqrt_d_model" and not config.tie_embeddings


def test_alibi_bias_depends_only_on_the_distance():
    q, k = torch.arange(12), torch.arange(12)
    bias = alibi_bias(4, q, k, causal=True)  # (H, L, L)
    assert torch.equal(bias[:, 3, 1], bias[:, 10, 8])  # the seed's pair, ALiBi's way
    assert (bias[:, 10, :10].diff(dim=-1) > 0).all()  # nearer keys are penalised less, at any position


def test_learned_positions_past_the_table_reuse_its_last_row():
    table = LearnedPositions(4, 6)
    with pytest.raises(ValueError, match="past max_len"):
        table(2, 4)
    rows = ClampedRows(table)(2, 4)  # positions 2, 3, 4, 5
    assert torch.equal(rows[:2], table.weight[2:4]) and torch.equal(rows[2], table.weight[3])
    assert torch.equal(rows[3], table.weight[3])


def test_the_note_states_each_gap_and_their_order():
    line = gap_line({"learned": 0.5, "sinusoidal": 0.25, "rope": 0.04, "alibi": -0.01}, 32)
    assert line.startswith("past length 32 ")
    assert "learned +0.50, sinusoidal +0.25, RoPE +0.04, ALiBi -0.01" in line
    assert line.endswith("best to worst: ALiBi, RoPE, sinusoidal, learned")


def test_odd_d_head_is_refused_in_one_line():
    with pytest.raises(ValueError, match="must be even"):
        get("length-extrapolation").resolve(sets={"d_model": "18", "heads": "2"})
