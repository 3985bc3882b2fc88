"""activation-none: the FFN trained without activation IS one d_model x d_model matrix (to float rounding), whose
rank the result reports within its bound."""

import pytest

from tui_lab.experiments import get, names


def test_without_activation_each_trained_ffn_is_one_matrix():
    exp = get("activation-none")
    result = exp.run(exp.resolve(sets={"task": "copy", "steps": "3", "eval_examples": "10"}))
    s = result.scalars
    assert s["linear_error"] < 1e-4  # ffn(x) == x W'^T + b' for the trained weights
    assert 0 < s["ffn_rank_max"] <= s["ffn_rank_bound"] <= s["d_ff"]
    rows = result.tables["ffn_rank"].rows
    assert rows and all(row[2] <= row[3] for row in rows)
    assert [c.label for c in result.plots["loss"].curves] == ["relu", "none"]


def test_it_is_registered_and_bad_options_are_one_line():
    assert "activation-none" in names()
    with pytest.raises(ValueError, match=r"^task \('german'\) must be one of: numbers-de, copy, reverse$"):
        get("activation-none").resolve(sets={"task": "german"})
