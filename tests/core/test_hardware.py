import json

import pytest
import torch

from tui_lab import hardware
from tui_lab.devices import pick_device
from tui_lab.hardware import matmul_peak_flops


def test_pick_device_checks_what_exists():
    assert pick_device("cpu") == "cpu"
    assert pick_device(None) in ("cpu", "cuda", "mps")
    with pytest.raises(ValueError, match="device"):
        pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available"):
            pick_device("cuda")


def test_matmul_peak_is_measured_and_leaves_the_rng_alone(private_cache):
    state = torch.get_rng_state()
    peak = matmul_peak_flops("cpu", size=128, repeats=2)
    assert torch.equal(state, torch.get_rng_state())
    assert 1e8 < peak < 1e15  # FLOP/s: some real number, not a hard-coded datasheet figure
    assert matmul_peak_flops("cpu") == matmul_peak_flops("cpu")  # measured once, then cached


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """An empty cache folder and no peak remembered by this process: as on a first launch."""
    monkeypatch.setenv("TUI_LAB_CACHE", str(tmp_path))
    monkeypatch.setattr(hardware, "_PEAKS", {})
    return tmp_path


def _count_measures(monkeypatch, flops: float = 5e10) -> list:
    calls = []

    def fake_measure(device, dtype, n, repeats):
        calls.append(n)
        return flops

    monkeypatch.setattr(hardware, "_measure", fake_measure)
    return calls


def test_peak_is_kept_per_machine_and_read_back_by_a_later_launch(private_cache, monkeypatch):
    first = matmul_peak_flops("cpu")
    path = private_cache / hardware.PEAK_FILE
    kept = json.loads(path.read_text())
    key = hardware.peak_key("cpu", torch.float32)
    assert kept[key]["flops"] == first and f"threads={torch.get_num_threads()}" in key and "float32" in key
    # A later launch (no peak in memory) reads the kept figure instead of measuring a different one.
    monkeypatch.setattr(hardware, "_PEAKS", {})
    calls = _count_measures(monkeypatch)
    assert matmul_peak_flops("cpu") == first and calls == []


def test_peak_is_keyed_by_threads(private_cache, monkeypatch):
    calls = _count_measures(monkeypatch)
    threads = torch.get_num_threads()
    matmul_peak_flops("cpu")
    try:
        torch.set_num_threads(threads + 1)
        matmul_peak_flops("cpu")
    finally:
        torch.set_num_threads(threads)
    assert len(calls) == 2 and len(json.loads((private_cache / hardware.PEAK_FILE).read_text())) == 2


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"%s": {"flops": -1}}'])
def test_an_unreadable_or_nonsense_cache_is_measured_again_and_rewritten(private_cache, monkeypatch, content):
    path = private_cache / hardware.PEAK_FILE
    path.write_text(content.replace("%s", hardware.peak_key("cpu", torch.float32)))
    calls = _count_measures(monkeypatch, flops=7e10)
    assert matmul_peak_flops("cpu") == 7e10 and len(calls) == 1
    assert json.loads(path.read_text())[hardware.peak_key("cpu", torch.float32)]["flops"] == 7e10


def test_an_explicit_size_measures_and_keeps_nothing(private_cache):
    matmul_peak_flops("cpu", size=64, repeats=1)
    assert not (private_cache / hardware.PEAK_FILE).exists()


def test_remeasuring_keeps_the_higher_peak(private_cache, monkeypatch):
    key = hardware.peak_key("cpu", torch.float32)
    hardware._write_peak(key, 3e10, 1024)  # measured under load
    calls = _count_measures(monkeypatch, flops=2.5e11)
    assert hardware.remeasure_peak("cpu") == 2.5e11 and matmul_peak_flops("cpu") == 2.5e11
    assert json.loads((private_cache / hardware.PEAK_FILE).read_text())[key]["flops"] == 2.5e11
    calls = _count_measures(monkeypatch, flops=1e11)  # a later measurement under load never lowers it
    assert hardware.remeasure_peak("cpu") == 2.5e11 and len(calls) == 1


def test_the_cpu_key_names_its_matmul_units():
    name = hardware.device_name("cpu")
    flags = next((line.split() for line in open("/proc/cpuinfo") if line.startswith("flags")), []) \
        if hardware.Path("/proc/cpuinfo").exists() else []
    if "avx512f" in flags:
        assert name.endswith(("avx512", "amx"))
    elif "avx2" in flags:
        assert name.endswith("avx2")


class _Preempted:
    """A wall clock that loses half a second inside every timed matmul: the core was another process's."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def test_a_one_thread_cpu_peak_counts_the_kernels_cpu_time_not_the_time_the_core_was_taken(monkeypatch):
    monkeypatch.setattr(hardware.time, "perf_counter", _Preempted())
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = matmul_peak_flops("cpu", size=128, repeats=2)
        torch.set_num_threads(2)
        two = matmul_peak_flops("cpu", size=128, repeats=2)
    finally:
        torch.set_num_threads(threads)
    preempted = 2 * 128**3 / 0.5  # the wall clock's figure
    assert one > 50 * preempted  # the kernel's CPU time: a 128 matmul takes well under 10 ms of it
    assert two == preempted  # several threads: the wall clock, the only time that counts all of them


def test_the_cpu_peak_times_every_gemm_the_model_may_train_on():
    """The model's Linear trains on oneDNN where it beats torch's BLAS (tui_lab/model/linear.py): the float32 CPU
    peak is the better of the two, each computing the same product (an AMD EPYC's MFU read 118% against MKL's)."""
    import torch

    from tui_lab.hardware import _products, onednn_linear

    a, b = torch.randn(64, 32), torch.randn(32, 48)
    products = _products(a, b)
    assert len(products) == (2 if onednn_linear() is not None else 1)
    for product in products:
        torch.testing.assert_close(product(), a @ b, rtol=1e-5, atol=1e-5)
    assert len(_products(a.double(), b.double())) == 1  # oneDNN's Linear trains float32 only
