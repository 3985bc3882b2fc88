"""moe-vs-dense: the router spreads tokens over more than one expert, and the MoE holds more parameters than it
spends per token while its dense twin spends the same."""

import json

import pytest

from tui_lab.experiments import get, names


def test_the_moe_routes_tokens_to_several_experts_and_spends_what_its_twin_does(tmp_path):
    exp = get("moe-vs-dense")
    result = exp.run(exp.resolve(sets={"steps": "3", "layers": "1", "batch_size": "2", "seq_len": "16"}))
    s = result.scalars
    assert s["experts_used_min"] > 1  # every layer sent tokens to more than one expert
    grid = result.grids["experts"]
    assert grid.row_labels == ["layer 0"] and len(grid.col_labels) == 4
    assert sum(grid.values[0]) == pytest.approx(1.0, abs=1e-3)
    assert s["params_moe"] > 1.5 * s["params_dense"]  # four experts held, two used
    router = 128 * 4  # d_model x experts, one layer: all the MoE adds per token
    assert s["active_moe"] - s["active_dense"] == router
    assert [c.label for c in result.plots["loss"].curves] == ["moe (4 experts, top-2)", "dense twin, equal active"]
    exported = {p.name.split("-")[-1] for p in result.export(tmp_path)}  # what --export writes
    assert {"loss.csv", "val.csv", "models.csv", "experts.csv"} <= exported
    assert json.loads(json.dumps(result.to_dict()))["grids"]["experts"]["axes"] == ["layer", "expert"]  # --json's


def test_it_is_registered_and_bad_options_are_one_line():
    assert "moe-vs-dense" in names()
    exp = get("moe-vs-dense")
    with pytest.raises(ValueError, match=r"^experts_per_token \(3\) must be at most experts \(2\)$"):
        exp.resolve(sets={"experts": "2", "experts_per_token": "3"})
    with pytest.raises(ValueError, match=r"^experts \(1\) must be at least 2$"):
        exp.resolve(sets={"experts": "1", "experts_per_token": "1"})
    with pytest.raises(ValueError, match=r"^seq_len \(300\) must be at most moe-toy's max_len 256$"):
        exp.resolve(sets={"seq_len": "300"})
