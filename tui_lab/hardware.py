"""What a device is and the matmul peak measured on it, the denominator of MFU (`tui_lab.devices` picks it).

MFU is achieved model FLOPs over what this device can actually do: a hard-coded GPU datasheet figure
would make a laptop CPU look idle. The peak is measured once per (device, dtype, threads) and kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

_PEAKS: dict[tuple[str, str, int], float] = {}


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
    """FLOP/s of a square matmul on `device`, best of `repeats` after a warm-up; cached per thread count."""
    key = (str(device), str(dtype), torch.get_num_threads())
    if size is None and key in _PEAKS:
        return _PEAKS[key]
    n = size or (4096 if str(device).startswith("cuda") else 1024)
    peak = _measure(torch.device(device), dtype, n, repeats)
    if size is None:
        _PEAKS[key] = peak
    return peak


def _measure(device: torch.device, dtype: torch.dtype, n: int, repeats: int) -> float:
    # The values do not change the timing; constants leave the global RNG (training's dropout) untouched.
    a = torch.full((n, n), 1.0 / n, device=device, dtype=dtype)
    b = torch.full((n, n), 0.5, device=device, dtype=dtype)
    _sync(device)
    a @ b  # warm-up: first call pays for allocation and kernel selection
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
