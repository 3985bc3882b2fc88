"""fused-attention: time and peak memory against length for the fused kernel vs the path that builds the weights.

Seed 001: FlashAttention computes exact attention without materialising the weights; seed 003: the (N, L, S)
weights are the main cost. Both paths are the lab's own `attend()`: `need_weights=False` calls
`F.scaled_dot_product_attention`, `need_weights=True` builds scores and softmax weights (N, H, L, L) to hand
them back. For each length: the median time over repeats, the peak memory, the predicted size of one
(N, H, L, L) tensor, and the largest difference between the two outputs (they compute the same thing).

Peak memory: on CUDA, the allocator's own peak (`torch.cuda.max_memory_allocated`) above what was allocated
before the call. On CPU torch keeps no allocator statistics, so it is the most bytes of tensors the call's
operations returned that were alive at once, counted by a TorchDispatchMode (`LiveBytes`): every tensor the
path materialises, but not the scratch a kernel uses inside itself. The result names which method it used.
"""

from __future__ import annotations

import statistics
import time
import weakref
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, usable_device
from tui_lab.experiments.result import Result, Table

PATHS = ("fused", "explicit")


def live_bytes_mode():
    """A TorchDispatchMode counting bytes of tensors returned by operations while they are alive, and the peak."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class LiveBytes(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.live = self.peak = 0
            self.storages: set[int] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in self.storages:
                    self._track(t)
            return out

        def _track(self, t) -> None:
            key, size = t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()
            if not size:
                return
            self.storages.add(key)
            self.live += size
            self.peak = max(self.peak, self.live)
            weakref.finalize(t, self._free, key, size)

        def _free(self, key: int, size: int) -> None:
            if key in self.storages:
                self.storages.discard(key)
                self.live -= size

    return LiveBytes()


def peak_bytes(call, device: str) -> int:
    """Peak memory of `call()` above what was allocated before it (see the module docstring for the method)."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        out = call()
        torch.cuda.synchronize(device)
        del out
        return torch.cuda.max_memory_allocated(device) - before
    mode = live_bytes_mode()
    with mode:
        out = call()
    del out
    return mode.peak


def median_seconds(call, device: str, repeats: int) -> float:
    import torch

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)

    call()  # warm-up: kernels chosen, buffers allocated once
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_length(length: int, options: dict[str, Any], device: str) -> dict[str, Any]:
    import torch

    from tui_lab.model.scaled_dot import attend

    n, h, d = options["batch"], options["heads"], options["d_head"]
    gen = torch.Generator(device=device).manual_seed(options["seed"])
    q, k, v = (torch.randn(n, h, length, d, device=device, generator=gen) for _ in range(3))
    calls = {"fused": lambda: attend(q, k, v, causal=True)[0],
             "explicit": lambda: attend(q, k, v, causal=True, need_weights=True)[0]}
    row: dict[str, Any] = {"L": length, "weights_bytes": n * h * length * length * q.element_size()}
    with torch.no_grad():
        for path, call in calls.items():
            row[f"{path}_s"] = median_seconds(call, device, options["repeats"])
            row[f"{path}_peak_bytes"] = peak_bytes(call, device)
        row["max_abs_diff"] = (calls["fused"]() - calls["explicit"]()).abs().max().item()
    return row


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.devices import pick_device

    device = pick_device(options["device"])
    rows = []
    for i, length in enumerate(options["lengths"]):
        check(cancel, "fused-attention")
        progress(i / len(options["lengths"]), f"L={length} on {device}")
        rows.append(measure_length(length, options, device))
    return _result(options, rows, device)


def _result(options: dict[str, Any], rows: list[dict[str, Any]], device: str) -> Result:
    result = Result("fused-attention", options)
    method = ("torch.cuda.max_memory_allocated (allocator peak)" if device.startswith("cuda") else
              "bytes of tensors the operations returned, live at once (TorchDispatchMode; kernel scratch not seen)")
    lengths = [r["L"] for r in rows]
    mib = 2 ** 20
    time_plot = result.plot("time", f"median time per call on {device}", "L", "ms")
    memory_plot = result.plot("memory", "peak memory vs one (N, H, L, L) tensor", "L", "MiB")
    for path in PATHS:
        time_plot.add(path, lengths, [1000 * r[f"{path}_s"] for r in rows])
        memory_plot.add(path, lengths, [r[f"{path}_peak_bytes"] / mib for r in rows])
    memory_plot.add("predicted (N,H,L,L)", lengths, [r["weights_bytes"] / mib for r in rows])
    table = Table(f"N={options['batch']} H={options['heads']} D={options['d_head']}, causal, float32", [
        "L", "fused ms", "explicit ms", "fused peak MiB", "explicit peak MiB", "(N,H,L,L) MiB", "max |diff|"])
    for r in rows:
        table.rows.append([r["L"], round(1000 * r["fused_s"], 3), round(1000 * r["explicit_s"], 3),
                           round(r["fused_peak_bytes"] / mib, 3), round(r["explicit_peak_bytes"] / mib, 3),
                           round(r["weights_bytes"] / mib, 3), r["max_abs_diff"]])
    result.tables["lengths"] = table
    last = rows[-1]
    result.scalars = {"device": device, "memory_method": method, "longest_L": last["L"],
                      "fused_ms": round(1000 * last["fused_s"], 3), "explicit_ms": round(1000 * last["explicit_s"], 3),
                      "fused_peak_mib": round(last["fused_peak_bytes"] / mib, 3),
                      "explicit_peak_mib": round(last["explicit_peak_bytes"] / mib, 3),
                      "weights_tensor_mib": round(last["weights_bytes"] / mib, 3),
                      "max_abs_diff": max(r["max_abs_diff"] for r in rows)}
    s = result.scalars
    result.notes = [
        f"at L={s['longest_L']}: the explicit path peaks at {s['explicit_peak_mib']} MiB, "
        f"{s['explicit_peak_mib'] / s['weights_tensor_mib']:.1f}x one (N,H,L,L) tensor of "
        f"{s['weights_tensor_mib']} MiB "
        f"(scores and weights both exist); the fused kernel at {s['fused_peak_mib']} MiB; same outputs to "
        f"{s['max_abs_diff']:.1e}", f"memory measured as: {method}"]
    return result


def _check(options: dict[str, Any]) -> None:
    for name in ("lengths", "batch", "heads", "d_head", "repeats"):
        at_least(options, name, 1)
    usable_device(options)


EXPERIMENT = Experiment(
    name="fused-attention",
    title="Fused attention vs building the weights",
    lesson="Seed 001: FlashAttention computes exact attention without materialising the weights. Seed 003: the "
           "(N, L, S) attention weights are the main cost.",
    options={"lengths": (256, 512, 1024, 2048, 4096), "batch": 1, "heads": 8, "d_head": 64, "repeats": 3,
             "device": "auto", "seed": 0},
    quick={"lengths": (128, 256, 512, 1024), "repeats": 2},
    runner=run,
    help={"lengths": "sequence lengths L", "batch": "N", "heads": "H", "d_head": "D",
          "repeats": "timed calls per path and length (median kept)", "device": "auto, cpu, cuda, cuda:N or mps"},
    check_options=_check,
)
