"""Which devices exist here: one set of rules and messages for the CLI, the app and the trainer.

Two checks share the messages. `device_problem` needs no torch, so the app can refuse a bad `--device`
before its first frame; `pick_device` asks torch and resolves "auto" (cuda, then mps, then cpu).
`free_memory` and `fit_problem` refuse random weights that cannot fit before they are built.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from tui_lab.analysis.format import fmt_bytes

DEVICE_KINDS = ("cpu", "cuda", "mps")
AUTO = (None, "", "auto")
_DEVICE = re.compile(r"^(cpu|mps|cuda)(:\d+)?$")
_NVIDIA_GPUS = Path("/proc/driver/nvidia/gpus")  # one entry per GPU the Linux driver sees


def device_problem(device: str | None, field: str = "device") -> str | None:
    """A cheap check (no torch) that `device` can exist here; None if it may, else a one-line reason."""
    if device in AUTO:
        return None
    if not _DEVICE.match(device):
        return _bad_name(device, field)
    kind, _, index = device.partition(":")
    if kind == "mps" and sys.platform != "darwin":
        return f"{field} ({device!r}): MPS is not available on this machine (macOS only)"
    if kind == "cuda" and sys.platform.startswith("linux"):
        count = len(list(_NVIDIA_GPUS.iterdir())) if _NVIDIA_GPUS.is_dir() else 0
        if count == 0:
            return _no_cuda(device, field)
        if index and int(index) >= count:
            return _too_few(device, field, count)
    return None


def pick_device(requested: str | None = None, field: str = "device") -> str:
    """`requested` checked against what torch sees; None or "auto" picks cuda, then mps, then cpu."""
    import torch

    if requested in AUTO:
        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if not _DEVICE.match(requested):
        raise ValueError(_bad_name(requested, field))
    kind, _, index = requested.partition(":")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(_no_cuda(requested, field))
        if index and int(index) >= torch.cuda.device_count():
            raise ValueError(_too_few(requested, field, torch.cuda.device_count()))
    if kind == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{field} ({requested!r}): MPS is not available to this torch build")
    return requested


def free_memory(device: str) -> int | None:
    """Bytes free on `device`: MemAvailable for the CPU, the CUDA driver's count for a GPU."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def fit_problem(weights: int, free: int | None, device: str) -> str | None:
    """Refuse weights that do not fit in what is free (None when the free memory is unknown)."""
    if free is None or weights <= free:
        return None
    return f"refused: the weights need {fmt_bytes(weights)} but only {fmt_bytes(free)} is free on {device}"


def check_free(need: int, device: str, doing: str, hint: str = "") -> None:
    """Refuse, before it starts, work that needs more memory than is free: on a CPU the kernel ends a process that
    touches more than there is (the OOM killer: no exception to catch, the app gone with what it held; the
    crawler's long tier lost a worker so to a 5-digit batch in Speed's MHA/GQA panel). A one-line ValueError
    naming what needs it; nothing is checked where the free memory is unknown."""
    free = free_memory(device)
    if free is not None and need > free:
        line = f"{doing} needs about {fmt_bytes(need)} of memory but {fmt_bytes(free)} is free on {device}"
        raise ValueError(f"{line}; {hint}" if hint else line)


def out_of_memory_line(err: BaseException, device: str, doing: str, hint: str = "") -> str | None:
    """One line for an out-of-memory error on `device` while `doing` ("training step 12"); None for any other
    error. torch's CUDA message is a paragraph about the allocator that never names the device it ran on."""
    if not _is_out_of_memory(err):
        return None
    asked = re.search(r"[Tt]ried to allocate ([\d.]+ \w+)", str(err))
    line = f"out of memory on {device} while {doing}" + (f" (it tried to allocate {asked.group(1)})" if asked else "")
    return f"{line}; {hint}" if hint else line


@contextlib.contextmanager
def out_of_memory(device: str, doing: str, hint: str = "") -> Iterator[None]:
    """Turn an out-of-memory error inside the block into a one-line ValueError naming `device`, after giving
    the allocator's cached blocks back (so what is still loaded keeps working)."""
    try:
        yield
    except Exception as err:
        line = out_of_memory_line(err, device, doing, hint)
        if line is None:
            raise
        release_cached_memory(device)
        raise ValueError(line) from None


def release_cached_memory(device: str) -> None:
    """Free the blocks torch's CUDA allocator keeps after a failed allocation (a no-op elsewhere)."""
    if str(device).startswith("cuda"):
        import torch

        with contextlib.suppress(RuntimeError):
            torch.cuda.empty_cache()


def _is_out_of_memory(err: BaseException) -> bool:
    # torch.OutOfMemoryError on CUDA; MPS and the CPU allocator raise a RuntimeError that says so.
    if type(err).__name__ == "OutOfMemoryError":
        return True
    text = str(err).lower()
    return isinstance(err, RuntimeError) and any(s in text for s in ("out of memory", "failed to allocate",
                                                                  "can't allocate memory"))


def _bad_name(device: str, field: str) -> str:
    return f"{field} ({device!r}) must be cpu, cuda, cuda:N, mps or auto"


def _no_cuda(device: str, field: str) -> str:
    return f"{field} ({device!r}): CUDA is not available on this machine"


def _too_few(device: str, field: str, count: int) -> str:
    return f"{field} ({device!r}) is not available: this machine has {count} CUDA device(s)"
