"""efficient-attention: its quick run measures what it says, in under 30 CPU-seconds at one thread."""

import time

import pytest

from tui_lab.experiments import get
from tui_lab.experiments.efficient_attention import KINDS, SPEED_PATHS


def test_the_quick_run_measures_error_speed_and_training_in_under_30_seconds():
    exp = get("efficient-attention")
    options = exp.resolve(quick=True)
    start = time.process_time()  # CPU time: the shared machine's load stretches the wall clock, not this
    result = exp.run(options)
    assert time.process_time() - start < 30
    s = result.scalars
    errors = list(s["performer_error"].values())  # m = 64, 256, 1024 on the same inputs
    assert list(s["performer_error"]) == ["64", "256", "1024"] and errors[0] > errors[1] > errors[2]
    assert -0.75 < s["performer_slope"] < -0.25  # roughly 1/sqrt(m)
    n = options["n"]
    assert list(s["linformer_error"]) == [str(n // 8), str(n // 4), str(n // 2), str(n)]
    assert s["linformer_identity_error"] < 1e-5  # identity projections at k = n: exact attention
    fitted = list(s["linformer_fitted_error"].values())
    assert fitted[0] > fitted[-1] and all(f < r for f, r in zip(fitted, s["linformer_error"].values(), strict=True))
    assert [row[0] for row in result.tables["time"].rows] == list(options["lengths"])
    assert [c.label for c in result.plots["time"].curves] == list(SPEED_PATHS)
    assert all(v > 0 for row in result.tables["memory"].rows for v in row[1:])
    rows = result.tables["training"].rows
    assert [r[0] for r in rows] == list(KINDS) and all(len(r) == 2 + 3 + 1 for r in rows)  # three seeds, mean
    assert rows[1][1] - rows[0][1] == 2 * options["seq_len"] * (options["seq_len"] // 4) * options["layers"]
    assert rows[2][1] == rows[0][1]  # Performer's features are a buffer, not parameters
    assert result.notes[0].startswith("Performer's error ") and "fused exact kernel is faster than" in result.notes[1]


def test_options_are_checked_before_anything_runs():
    exp = get("efficient-attention")
    with pytest.raises(ValueError, match=r"^n \(4\) must be at least 8$"):
        exp.resolve(sets={"n": "4"})
    with pytest.raises(ValueError, match=r"d_model / heads \(3\) must be even"):
        exp.resolve(sets={"d_model": "12", "heads": "4"})
