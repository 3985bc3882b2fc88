"""The thread count each command ran on, and why, in its JSON (issue 39): `generate`, `bench generate`,
`train`'s start line and the mechanism commands (`lens`, `ablate`, `patch`, `attribute`, `heads`). A toy decodes on
1 thread (its ops are too small to share out); a training step's count, and a mechanism command's (its uncached
passes), follow the cores others leave free. The rule is checked, never a timing."""

from __future__ import annotations

import json

import pytest
import torch
from train_helpers import TEXT

from tui_lab import cpu_threads
from tui_lab.cli import main


@pytest.fixture(autouse=True)
def _count_back(monkeypatch):
    monkeypatch.delenv("TUI_LAB_DECODE_THREADS", raising=False)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)  # `train` sets the count for its run, in this process


def test_generate_json_says_the_toy_decoded_on_one_thread_and_why(capsys):
    assert main(["generate", "--preset", "gpt2-toy-english", "--prompt", "The old king", "--max-new-tokens", "4",
                 "--temperature", "0", "--json"]) == 0
    threads = json.loads(capsys.readouterr().out)["threads"]
    assert threads["threads"] == 1 and threads["why"].startswith("ops too small to share out")


def test_bench_generate_json_says_each_paths_choice(capsys):
    assert main(["bench", "generate", "--preset", "gpt2-toy", "--new-tokens", "4", "--repeats", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["thread_choice"]) == {"cached", "uncached"}
    assert out["threads"]["cached"] == out["thread_choice"]["cached"]["threads"] == 1


def test_train_json_start_line_says_the_count_for_the_load(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("TUI_LAB_TRAIN_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu_threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(cpu_threads, "load_now", lambda: cpu_threads.Load(2, 1.0, "fake", None))  # one core held
    data = tmp_path / "prose.txt"
    data.write_text(TEXT, encoding="utf-8")
    assert main(["train", "--preset", "gpt2-toy", "--batch-size", "16", "--seq-len", "64", "--steps", "1",
                 "--device", "cpu", "--data", str(data), "--json"]) == 0
    start = json.loads(capsys.readouterr().out.splitlines()[0])
    assert start["event"] == "start" and start["threads"]["threads"] == 1
    assert start["threads"]["why"].startswith("1 of 2 cores free") and start["threads"]["load"]["others"] == 1.0


MECHANISM = {  # the mechanism commands and the least each needs, on the gpt2-toy preset (random weights)
    "lens": ["--prompt", "abc"],
    "ablate": ["--batch", "2", "--seq-len", "8"],
    "patch": ["--prompt", "abc", "--corrupt", "abd", "--answer-id", "3", "--wrong-id", "4"],
    "attribute": ["--prompt", "abc", "--answer-id", "3"],
    "heads": ["--seq-len", "4", "--batch", "2"],
}


@pytest.mark.parametrize("command", sorted(MECHANISM))
def test_mechanism_json_says_the_count_for_the_load_and_why(capsys, monkeypatch, command):
    """An uncached pass of gpt2-toy (128 tokens x 128 -> 512) is large enough to share out: with one of two cores
    held by others, the command runs on the other one."""
    monkeypatch.setattr(cpu_threads, "load_now", lambda: cpu_threads.Load(2, 1.0, "fake", None))
    torch.set_num_threads(2)
    assert main([command, "--preset", "gpt2-toy", *MECHANISM[command], "--json"]) == 0
    threads = json.loads(capsys.readouterr().out)["threads"]
    assert threads["threads"] == 1 and threads["why"].startswith("1 of 2 cores free") and torch.get_num_threads() == 2


def _spy_on_lens(monkeypatch) -> list[int]:
    """The torch thread count `logit_lens` ran on, recorded at each call."""
    from tui_lab.mechanism import lens

    seen, real = [], lens.logit_lens
    monkeypatch.setattr(lens, "logit_lens", lambda *a, **k: (seen.append(torch.get_num_threads()), real(*a, **k))[1])
    return seen


@pytest.mark.parametrize("others, expected", [(0.0, 2), (1.0, 1)])
def test_lens_runs_on_the_count_the_rule_chooses_for_the_load_and_gives_torchs_back(capsys, monkeypatch, others,
                                                                                    expected):
    """The cores others leave free now, at most torch's count: the count set for the run is the one the JSON names,
    and torch's comes back after."""
    monkeypatch.setattr(cpu_threads, "load_now", lambda: cpu_threads.Load(2, others, "fake", None))
    torch.set_num_threads(2)
    seen = _spy_on_lens(monkeypatch)
    assert main(["lens", "--preset", "gpt2-toy", "--prompt", "abc", "--json"]) == 0
    threads = json.loads(capsys.readouterr().out)["threads"]
    assert seen == [expected] and threads["threads"] == expected and torch.get_num_threads() == 2
    assert threads["why"].startswith(f"{expected} of 2 cores free") and threads["load"]["others"] == others


def test_a_forced_count_wins_for_a_mechanism_command(capsys, monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "2")
    torch.set_num_threads(1)
    seen = _spy_on_lens(monkeypatch)
    assert main(["lens", "--preset", "gpt2-toy", "--prompt", "abc", "--json"]) == 0
    threads = json.loads(capsys.readouterr().out)["threads"]
    assert seen == [2] and threads == {**threads, "threads": 2, "why": "forced by TUI_LAB_DECODE_THREADS"}
    assert torch.get_num_threads() == 1
