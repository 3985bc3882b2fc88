"""The thread count each command ran on, and why, in its JSON (issue 39): `generate`, `bench generate` and
`train`'s start line. A toy decodes on 1 thread (its ops are too small to share out); a training step's count
follows the cores others leave free."""

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
