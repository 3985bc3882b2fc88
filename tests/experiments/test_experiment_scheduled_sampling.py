"""scheduled-sampling: teacher forcing feeds the gold word at every step; each schedule feeds the decoder its own
predictions more and more often; reverse-long's sequences are long and held out."""

import pytest

from tui_lab.experiments import get, names
from tui_lab.experiments.long_reverse import LONG_RANGE, long_reverse_task


def test_each_schedule_lowers_the_gold_word_rate_and_teacher_forcing_keeps_it():
    exp = get("scheduled-sampling")
    result = exp.run(exp.resolve(sets={"tasks": "copy", "steps": "6", "eval_examples": "10"}))
    curves = {c.label: c.ys for c in result.plots["teacher_forcing"].curves}
    assert curves["none"] == [1.0] * 6
    for schedule in ("linear", "exponential", "inverse_sigmoid"):
        ys = curves[schedule]
        falls = all(a >= b for a, b in zip(ys[:-1], ys[1:], strict=True))
        assert falls and ys[-1] < 0.5, schedule  # ends feeding the model's own words most of the time
    assert result.tables["exact_match"].columns == ["task", "none", "linear", "exponential", "inverse_sigmoid"]


def test_reverse_long_holds_long_sequences_reversed_and_keeps_held_out_apart():
    task = long_reverse_task(0, train_size=200, val_size=20)
    assert all(LONG_RANGE[0] <= len(src) <= LONG_RANGE[1] and tgt == src[::-1] for src, tgt in task.train + task.val)
    assert not {tuple(s) for s, _ in task.train} & {tuple(s) for s, _ in task.val}


def test_it_is_registered_and_bad_options_are_one_line():
    assert "scheduled-sampling" in names()
    with pytest.raises(ValueError, match=r"^schedules \('cosine'\) must be one of: none, linear, exponential"):
        get("scheduled-sampling").resolve(sets={"schedules": "none,cosine"})
    with pytest.raises(ValueError, match=r"^tasks \('names'\) must be one of: reverse-long"):
        get("scheduled-sampling").resolve(sets={"tasks": "names"})
