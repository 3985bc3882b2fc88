"""The experiments' frame (registry, options, results and their export) and order-blindness's claim."""

import csv
import json
import subprocess
import sys

import pytest

from tui_lab.experiments import Cancelled, Result, get, names
from tui_lab.experiments.base import parse_option


def test_every_registered_experiment_describes_itself_and_runs_quick_with_known_options():
    for name in names():
        exp = get(name)
        assert exp.name == name and exp.title and exp.lesson
        assert set(exp.quick) <= set(exp.options), name
        assert set(exp.help) <= set(exp.options), name
        exp.resolve(quick=True)  # the quick options pass the experiment's own checks


def test_unknown_names_and_options_are_one_line():
    with pytest.raises(ValueError, match="did you mean .order-blindness."):
        get("order-blindnes")
    with pytest.raises(ValueError, match="the experiments are order-blindness"):
        get("zzz")
    with pytest.raises(ValueError, match="unknown option 'rank' for order-blindness"):
        get("order-blindness").resolve(sets={"rank": "3"})


def test_options_parse_to_their_default_type():
    assert parse_option("steps", " 12 ", 5) == 12
    assert parse_option("lr", "1e-3", 0.1) == pytest.approx(1e-3)
    assert parse_option("on", "off", True) is False
    assert parse_option("widths", "32, 64,128", (16,)) == (32, 64, 128)
    with pytest.raises(ValueError, match="steps must be a whole number, got 'x'"):
        parse_option("steps", "x", 5)
    with pytest.raises(ValueError, match="widths must be a whole number"):
        parse_option("widths", "32,big", (16,))


def test_result_exports_json_and_one_csv_per_figure(tmp_path):
    result = Result("demo", {"steps": 3})
    result.scalars["final"] = 1.5
    result.plot("loss", "loss", "step", "loss").add("a", [1, 2], [3.0, 2.0])
    paths = result.export(tmp_path)
    data = json.loads(paths[0].read_text())
    assert data["scalars"] == {"final": 1.5} and data["plots"]["loss"]["curves"][0]["ys"] == [3.0, 2.0]
    rows = list(csv.reader(paths[1].open()))
    assert rows == [["curve", "step", "loss"], ["a", "1.0", "3.0"], ["a", "2.0", "2.0"]]


def test_order_blindness_without_positions_is_exact_and_with_positions_is_not():
    exp = get("order-blindness")
    result = exp.run(exp.resolve(sets={"preset": "transformer-2017-toy", "sentence": "I like you a lot"}))
    s = result.scalars
    assert s["without_positions_max_diff"] < 1e-5
    assert s["with_positions_max_diff"] > 1e-2
    assert s["causal_without_positions_max_diff"] > 1e-3  # the causal mask alone tells order apart
    assert len(result.tables["tokens"].rows) == 5 and len(result.grids["differences"].values) == 3
    assert result.notes[0] == "sentence: I like you a lot"


@pytest.mark.parametrize("positions", ["learned", "rope", "alibi"])
def test_every_position_scheme_breaks_the_symmetry(positions):
    exp = get("order-blindness")
    s = exp.run(exp.resolve(sets={"positions": positions, "sentence": "a b c d"})).scalars
    assert s["without_positions_max_diff"] < 1e-5 < 1e-3 < s["with_positions_max_diff"]


def test_cancel_before_the_first_encoding_raises_cancelled():
    exp = get("order-blindness")
    with pytest.raises(Cancelled):
        exp.run(exp.resolve(), cancel=lambda: True)


def test_listing_the_experiments_imports_neither_torch_nor_textual():
    code = ("import sys; from tui_lab.experiments import experiments; experiments(); "
            "print('torch' in sys.modules, 'textual' in sys.modules, 'rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]


def test_training_experiments_run_on_their_threads_option_and_hand_torch_its_threads_back():
    import torch

    from tui_lab.experiments.base import Experiment

    seen = []

    def runner(options, progress, cancel):
        seen.append(torch.get_num_threads())
        return Result("probe", options)

    exp = Experiment(name="probe", title="t", lesson="l", options={"threads": 1}, quick={}, runner=runner)
    before = torch.get_num_threads()
    exp.run(exp.resolve(sets={"threads": "1"}))
    assert seen == [1] and torch.get_num_threads() == before
    trains = [n for n in names() if "steps" in get(n).options]
    assert trains and all(get(n).options.get("threads") == 1 for n in trains), trains
