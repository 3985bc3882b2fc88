"""guided-attention: the diagonal prior pulls copy's cross-attention onto the diagonal sooner than plain softmax;
each run draws its alignment over one example; the options are checked in one line."""

import pytest

from tui_lab.experiments import get, names


def test_the_diagonal_prior_puts_attention_on_the_diagonal_sooner():
    exp = get("guided-attention")
    result = exp.run(exp.resolve(sets={"tasks": "copy", "kinds": "softmax,prior", "steps": "50", "every": "25",
                                       "eval_examples": "10"}))
    s = result.scalars
    assert s["agreement_copy_prior"] > s["agreement_copy_softmax"] + 0.2  # measured 0.54 vs 0.15 at 40 steps
    curves = result.plots["agreement_copy"].curves
    assert [c.label for c in curves] == ["softmax", "prior"] and curves[0].xs == [25.0, 50.0]
    grid = result.grids["alignment_copy_prior"]
    assert grid.row_labels == grid.col_labels == "alpha beta gamma delta epsilon zeta".split()
    assert all(sum(row) == pytest.approx(1.0, abs=0.01) for row in grid.values)  # softmax rows: one unit each


def test_it_is_registered_and_bad_options_are_one_line():
    assert "guided-attention" in names()
    exp = get("guided-attention")
    with pytest.raises(ValueError, match=r"^kinds \('hard'\) must be one of: softmax, prior, location-aware"):
        exp.resolve(sets={"kinds": "hard"})
    with pytest.raises(ValueError, match=r"^threshold \(0.0\) must be above 0 and at most 1$"):
        exp.resolve(sets={"threshold": "0"})
    with pytest.raises(ValueError, match=r"^every \(0\) must be at least 1$"):
        exp.resolve(sets={"every": "0"})
