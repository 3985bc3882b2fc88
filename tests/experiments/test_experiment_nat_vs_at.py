"""nat-vs-at: a NAT decoder takes one pass where AT takes one per word, and both are timed at equal length; the
options are checked before anything trains."""

import pytest

from tui_lab.experiments import get, names


def test_nat_decodes_in_one_pass_where_at_takes_one_per_position():
    exp = get("nat-vs-at")
    options = exp.resolve(sets={"task": "copy", "modes": "autoregressive,nat-max-length", "steps": "3",
                                "decode": "20", "eval_examples": "10"})
    result = exp.run(options)
    s = result.scalars
    from tui_lab.data import load_task

    longest = load_task("copy").max_target_len
    assert s["passes_nat_max_length"] == 1 and s["passes_full_length_nat_max_length"] == 1
    assert s["passes_full_length_autoregressive"] == longest  # one pass per position when END is ignored
    # Both decodings are timed; which is faster is the run's measurement, not a unit test's (under pytest's two
    # workers the one-pass NAT once measured slower: 8.4 vs 7.0 ms)
    assert s["ms_full_length_nat_max_length"] > 0 and s["ms_full_length_autoregressive"] > 0
    assert [row[0] for row in result.tables["modes"].rows] == ["autoregressive", "nat-max-length"]
    assert result.notes[0].startswith("nat-max-length: exact match")


def test_it_is_registered_and_bad_options_are_one_line():
    assert "nat-vs-at" in names()
    exp = get("nat-vs-at")
    with pytest.raises(ValueError, match=r"^modes \('beam'\) must be one of: autoregressive, nat-length-classifier"):
        exp.resolve(sets={"modes": "autoregressive,beam"})
    with pytest.raises(ValueError, match=r"^task \('names'\) must be one of: numbers-de, copy, reverse$"):
        exp.resolve(sets={"task": "names"})
    with pytest.raises(ValueError, match=r"^modes \(autoregressive, autoregressive\) must name each value once$"):
        exp.resolve(sets={"modes": "autoregressive,autoregressive"})
    with pytest.raises(ValueError, match=r"^decode \(0\) must be at least 1$"):
        exp.resolve(sets={"decode": "0"})
