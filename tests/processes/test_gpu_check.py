"""benchmarks/gpu/gpu_check.py: one JSON line per check as it goes, a summary, the exit code; a missing device is
one line. The whole CPU smoke (every section, <= 60 s) runs in CI as `.ci/run gpu-check`; here only what is
quick: the refusal, two sections of the smoke, and a failing check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"
SCRIPT = BENCHMARKS / "gpu_check.py"
sys.path.insert(0, str(BENCHMARKS))

import gpu_check  # noqa: E402
from gpu_peaks import published  # noqa: E402


def lines_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_a_device_that_is_not_there_is_one_line_and_exit_2(tmp_path):
    out = tmp_path / "check.jsonl"
    done = run_script("--device", "cuda:1", "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.strip() == "gpu_check: error: --device ('cuda:1'): CUDA is not available on this machine"
    device, summary = lines_of(out.read_text())
    assert device == {"check": "device", "device": "cuda:1", "ok": False,
                      "error": "--device ('cuda:1'): CUDA is not available on this machine"}
    assert summary["check"] == "summary" and summary["failures"] == ["device"]


def test_the_smoke_writes_each_check_as_a_json_line_and_a_summary(tmp_path):
    out = tmp_path / "check.jsonl"
    out.write_text('{"check": "an earlier run"}\n')  # appended to, never overwritten
    done = run_script("--device", "cpu", "--smoke", "--only", "families", "cache", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    printed, kept = lines_of(done.stdout), lines_of(out.read_text())
    assert kept == [{"check": "an earlier run"}] + printed
    assert all({"check", "device", "ok", "seconds"} <= set(line) for line in printed)
    names = [line["check"] for line in printed]
    assert names[0] == "machine" and names[-1] == "summary"
    assert {"family gpt2-small", "family gpt2-toy", "family transformer-2017-toy", "family vit-toy",
            "family gpt2-toy-english", "cache 24", "cache 64"} <= set(names)
    by_name = {line["check"]: line for line in printed}
    assert by_name["family gpt2-small"]["params"] == 124_439_808 and by_name["family gpt2-small"]["built_on"] == "meta"
    assert by_name["family transformer-2017-toy"]["cached_equals_uncached"] is True
    assert by_name["cache 64"]["max_len"] == 16 + 64 and by_name["cache 64"]["identical"] is True
    summary = by_name["summary"]
    assert summary["ok"] and summary["failed"] == 0 and summary["passed"] == len(printed) - 1


def test_a_check_that_raises_is_a_failed_line_naming_the_device_and_the_run_goes_on(capsys):
    recorder = gpu_check.Recorder("cpu", None)

    def out_of_memory():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has ...")

    recorder.run("train gpt2-toy fp32", out_of_memory)
    recorder.run("cache 240", lambda: {"ok": True, "speedup": 3.1})
    summary = recorder.summary()
    failed, passed = recorder.lines[:2]
    assert failed["ok"] is False and failed["error"] == (
        "out of memory on cpu while train gpt2-toy fp32 (it tried to allocate 8.00 GiB)")
    assert passed == {"check": "cache 240", "device": "cpu", "ok": True, "seconds": passed["seconds"], "speedup": 3.1}
    assert summary["failures"] == ["train gpt2-toy fp32"] and summary["passed"] == 1 and not summary["ok"]
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_published_figures_match_device_names():
    assert published("NVIDIA H200").bf16 == 989.5
    assert published("NVIDIA H100 PCIe").name == "H100 PCIe" and published("NVIDIA H100 80GB HBM3").fp32 == 67.0
    assert published("NVIDIA A100-SXM4-80GB").flops("float32") == 19.5e12
    assert published("Tesla T4").flops("bfloat16") is None and published("cpu Intel(R) Xeon(R)") is None


def test_two_greedy_runs_that_part_away_from_a_tie_fail():
    from gpu_check_models import TIE, top2_gap_where_they_part

    from tui_lab import build_model, load_preset

    torch.manual_seed(0)
    model = build_model(load_preset("gpt2-toy", decoder_layers=1)).eval()
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.inference_mode():
        greedy = int(model(ids[:, :3])[0, -1].argmax())
    ours, other = torch.tensor([[5, 6, 7, greedy]]), torch.tensor([[5, 6, 7, (greedy + 1) % 256]])
    assert top2_gap_where_they_part(model, ours, other) > TIE  # random weights: no tie at 1e-4


def test_without_the_apps_packages_the_app_checks_are_skipped_not_failed(monkeypatch):
    import importlib.util

    import gpu_check_app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "textual" else real(name, *a))
    recorder = gpu_check.Recorder("cuda", None)
    gpu_check_app.run(recorder, "cuda", gpu_check.FULL)
    assert [line["check"] for line in recorder.lines] == [f"app {c}" for c in gpu_check_app.CHECKS]
    assert all(line["ok"] is None and "textual is not installed" in line["skipped"] for line in recorder.lines)
    summary = recorder.summary()
    assert summary["ok"] and summary["skipped"] == len(gpu_check_app.CHECKS) and summary["failed"] == 0
