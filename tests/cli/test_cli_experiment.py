"""`tui-lab experiment list|run`: the listing, the last JSON line's results, exports, one-line refusals."""

import json
import os
import subprocess
import sys

import pytest


def tui_lab(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tui_lab.cli", "experiment", *args], capture_output=True,
                          text=True, env=env)


def test_list_json_names_every_experiment_with_its_lesson_and_options():
    from tui_lab.experiments import names

    out = tui_lab("list", "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["experiments"]
    assert [e["name"] for e in listed] == list(names())
    assert all(e["lesson"].startswith("Seed") and e["options"] for e in listed)


def test_run_json_last_line_holds_the_results_and_export_writes_them(tmp_path):
    env = os.environ | {"TUI_LAB_EXPORTS": str(tmp_path)}
    out = tui_lab("run", "order-blindness", "--quick", "--json", "--export", "--set", "sentence=you like me",
                  env=env)
    assert out.returncode == 0, out.stderr
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["event"] == "result" and last["scalars"]["without_positions_max_diff"] < 1e-5
    assert last["options"]["sentence"] == "you like me"
    assert sorted(p.split(os.sep)[-1].split("-")[-1] for p in last["exported"])[-1] == "tokens.csv"
    assert all(os.path.exists(p) for p in last["exported"])


@pytest.mark.parametrize("args, message", [
    (["run", "order-blind"], "unknown experiment 'order-blind'; did you mean 'order-blindness'?"),
    (["run", "order-blindness", "--set", "seed=x"], "seed must be a whole number, got 'x'"),
    (["run", "order-blindness", "--set", "colour=red"], "unknown option 'colour' for order-blindness"),
    (["run", "order-blindness", "--set", "seed"], "--set takes OPTION=VALUE, got 'seed'"),
    (["run", "order-blindness", "--set", "positions=spiral"], "positions ('spiral') must be one of"),
    (["run", "lora", "--set", "model=gpt2-small"],
     "model (gpt2-small) is a random preset: it has no tokenizer and nothing learned to fine-tune; use a shipped toy "
     "(gpt2-toy-english)"),
])
def test_bad_names_and_values_are_one_line_and_exit_2(args, message):
    out = tui_lab(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and message in out.stderr
