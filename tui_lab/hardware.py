"""What a device is and the matmul peak measured on it, the denominator of MFU (`tui_lab.devices` picks it).

MFU is achieved model FLOPs over what this device can actually do: a hard-coded GPU datasheet figure
would make a laptop CPU look idle. The peak is measured once per machine (device, dtype, threads), kept in
the user's cache folder and read back by later launches, so MFU does not move between them.
"""

from __future__ import annotations

import functools
import math
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from tui_lab.paths import keep, read_kept

PEAK_FILE = "matmul_peak.json"

_PEAKS: dict[str, float] = {}  # this process's peaks, by peak_key


@dataclass(frozen=True)
class DeviceInfo:
    device: str
    name: str
    threads: int

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def device_info(device: str) -> DeviceInfo:
    if device.startswith("cuda"):
        return DeviceInfo(device, torch.cuda.get_device_name(torch.device(device)), torch.get_num_threads())
    return DeviceInfo(device, device, torch.get_num_threads())


def matmul_peak_flops(device: str = "cpu", dtype: torch.dtype = torch.float32, size: int | None = None,
                      repeats: int = 5) -> float:
    """FLOP/s of a square matmul on `device`, best of `repeats` after a warm-up.

    With the default size the figure is measured once per machine and kept in the user's cache folder
    (`tui_lab.paths.cache_dir()`, file `PEAK_FILE`) under `peak_key` (device name, dtype, threads): a peak
    re-measured at every launch moved with the machine's load (MFU read 36% in one launch and 51% in the
    next at the same speed). An explicit `size` always measures and keeps nothing.
    """
    if size is not None:
        return _measure(torch.device(device), dtype, size, repeats)
    key = peak_key(device, dtype)
    if key not in _PEAKS:
        peak = _read_peak(key)
        if peak is None:
            n = _peak_size(device)
            peak = _write_peak(key, _measure(torch.device(device), dtype, n, repeats), n)
        _PEAKS[key] = peak
    return _PEAKS[key]


def remeasure_peak(device: str = "cpu", dtype: torch.dtype = torch.float32) -> float:
    """Measure the kept peak again and keep the higher figure (a matmul measured under load is slow, never
    fast), for a caller that saw work run faster than the kept peak allows (MFU over 100%)."""
    key = peak_key(device, dtype)
    n = _peak_size(device)
    measured = _measure(torch.device(device), dtype, n, 5)
    kept = _read_peak(key) or 0.0
    _PEAKS[key] = _write_peak(key, measured, n) if measured > kept else kept
    return _PEAKS[key]


def _peak_size(device: str) -> int:
    """The square matmul a kept peak is measured on."""
    return 4096 if str(device).startswith("cuda") else 1024


def peak_key(device: str, dtype: torch.dtype) -> str:
    """What a kept peak is valid for: this device's model (the cache folder may be a home shared by
    several machines), the dtype and torch's thread count (the CPU peak scales with it)."""
    return f"{device_name(device)}|{str(dtype).removeprefix('torch.')}|threads={torch.get_num_threads()}"


def device_name(device: str) -> str:
    kind = str(device).split(":")[0]
    if kind == "cuda":
        return f"{device} {torch.cuda.get_device_name(torch.device(device))}"
    if kind == "cpu":
        return f"cpu {_cpu_model()} {_cpu_isa()}".rstrip()
    return f"{device} {platform.machine()}"


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """The first CPU's fields in /proc/cpuinfo (empty where there is none): read once per process."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            fields.setdefault(name.strip().lower(), value.strip())
    return fields


def _cpu_model() -> str:
    return _cpuinfo().get("model name") or platform.processor() or platform.machine() or "unknown"


def _cpu_isa() -> str:
    """The widest matmul units the CPU reports: one model name ("Intel(R) Xeon(R) Processor") covers
    machines with and without AVX-512, whose peaks differ several times over, so it is part of the key."""
    flags = _cpuinfo().get("flags", "").split()
    return next((isa for flag, isa in (("amx_tile", "amx"), ("avx512f", "avx512"), ("avx2", "avx2"))
                 if flag in flags), "")


def _read_peak(key: str) -> float | None:
    entry = read_kept(PEAK_FILE).get(key)
    flops = entry.get("flops") if isinstance(entry, dict) else None
    return float(flops) if isinstance(flops, (int, float)) and math.isfinite(flops) and flops > 0 else None


def _write_peak(key: str, flops: float, size: int) -> float:
    """Keep `flops` under `key` beside the other kept peaks."""
    keep(PEAK_FILE, key, {"flops": flops, "size": size, "torch": torch.__version__})
    return flops


def _measure(device: torch.device, dtype: torch.dtype, n: int, repeats: int) -> float:
    # The values do not change the timing; constants leave the global RNG (training's dropout) untouched.
    a = torch.full((n, n), 1.0 / n, device=device, dtype=dtype)
    b = torch.full((n, n), 0.5, device=device, dtype=dtype)
    # On a CPU with one thread the matmul runs on this thread: its CPU time is the kernel's, whatever else
    # the machine runs (the wall clock also counts the time other processes held the core, and a peak measured
    # under load was kept: a later run's MFU read 88%). With more threads, or a GPU, the wall clock.
    on_this_thread = device.type == "cpu" and torch.get_num_threads() == 1
    best = float("inf")
    for product in _products(a, b):
        _sync(device)
        product()  # warm-up: first call pays for allocation and kernel selection
        for _ in range(repeats):
            _sync(device)
            start, cpu = time.perf_counter(), time.thread_time()
            product()
            _sync(device)
            wall = time.perf_counter() - start
            best = min(best, min(wall, time.thread_time() - cpu) if on_this_thread else wall)
    return 2 * n**3 / best


@functools.cache
def onednn_linear():
    """oneDNN's CPU linear, `op(x, weight, bias, "none", [], "")` (torch.ops.mkldnn._linear_pointwise, what
    inductor calls for a CPU linear), or None where this torch has none."""
    mkldnn = getattr(torch.ops, "mkldnn", None)
    try:
        return mkldnn._linear_pointwise if mkldnn is not None and torch.backends.mkldnn.is_available() else None
    except (AttributeError, RuntimeError):
        return None


def _products(a: torch.Tensor, b: torch.Tensor) -> list:
    """a @ b on torch's BLAS, and on oneDNN for float32 on a CPU: the model's Linear trains on oneDNN where it is
    the faster (tui_lab/model/linear.py), and there MKL's matmul understated the peak (an AMD EPYC's gpt2-small
    step read 118% MFU against it)."""
    products = [lambda: a @ b]
    op = onednn_linear()
    if op is not None and a.device.type == "cpu" and a.dtype == torch.float32:
        b_rows = b.t().contiguous()
        try:
            op(a[:2], b_rows, None, "none", [], "")
            products.append(lambda: op(a, b_rows, None, "none", [], ""))
        except RuntimeError:
            pass
    return products


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
