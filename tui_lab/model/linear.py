"""nn.Linear whose training pass runs its products on oneDNN where oneDNN is the faster GEMM on this CPU.

torch sends a float32 Linear on a CPU to the BLAS it was built with (MKL in the CPU wheels). On an AMD EPYC with
AVX-512 (issue 39's machine, family 26) MKL takes a generic path: a toy's (1024 x 64) x (64 x 256) product ran in
307 us there and in 144 us through oneDNN (`torch.ops.mkldnn._linear_pointwise`, what inductor calls for a CPU
linear), and the Llama shape's training step went from 1.10x transformers' to 1.29x. On an Intel Xeon MKL is
oneDNN's equal or better. So a short probe (`onednn_faster`, once per process, both on the same shapes in
interleaved repeats) decides; `TUI_LAB_GEMM=onednn|blas` forces it.

Only the training pass changes (gradients on, float32, CPU): the forward and the input's gradient run on oneDNN,
the weight's gradient stays on torch's `mm` (faster on both CPUs measured). The numbers are the same sums in
another order (float rounding). Every pass without gradients (generation, the app's captures) is nn.Linear's own,
bit for bit, so cached and uncached generation still agree token for token.
"""

from __future__ import annotations

import os
import statistics
import time

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.hardware import onednn_linear

FORCED_BY = "TUI_LAB_GEMM"
PROBE_SHAPE = (1024, 128, 512)  # rows, in, out: a toy's training product, big enough to time
FASTER_BY = 0.85  # oneDNN is chosen where it takes at most this share of the BLAS's time
_choice: bool | None = None  # the probe's answer, once asked


def onednn_faster() -> bool:
    """Whether a training Linear runs on oneDNN here: forced by TUI_LAB_GEMM, else a probe's answer (kept)."""
    global _choice
    forced = os.environ.get(FORCED_BY, "").strip().lower()
    if forced in ("onednn", "blas"):
        return forced == "onednn" and onednn_linear() is not None
    if _choice is None:
        _choice = _probe()
    return _choice


def _probe(repeats: int = 7) -> bool:
    """oneDNN's and the BLAS's time for PROBE_SHAPE's product, interleaved, CPU time of this thread (~20 ms)."""
    op = onednn_linear()
    if op is None:
        return False
    rows, inner, out = PROBE_SHAPE
    x, w = torch.randn(rows, inner), torch.randn(out, inner)
    runs = {"blas": lambda: F.linear(x, w), "onednn": lambda: op(x, w, None, "none", [], "")}
    try:
        for run in runs.values():
            run()
    except RuntimeError:
        return False
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.thread_time()
            run()
            times[name].append(time.thread_time() - start)
    return statistics.median(times["onednn"]) <= FASTER_BY * statistics.median(times["blas"])


class _OneDnnLinear(torch.autograd.Function):
    """y = x W^T + b with the forward and x's gradient on oneDNN, W's gradient on torch's mm."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        x = x.contiguous()
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return onednn_linear()(x, weight, bias, "none", [], "")

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        x, weight = ctx.saved_tensors
        grad = grad.contiguous()
        d_x = onednn_linear()(grad, weight.t().contiguous(), None, "none", [], "") if ctx.needs_input_grad[0] else None
        rows = grad.reshape(-1, grad.shape[-1])
        d_weight = rows.t().mm(x.reshape(-1, x.shape[-1])) if ctx.needs_input_grad[1] else None
        d_bias = rows.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return d_x, d_weight, d_bias


class Linear(nn.Linear):
    """nn.Linear (its parameters, state dict and every pass without gradients), with a training pass on oneDNN
    where `onednn_faster()` says so."""

    def forward(self, x: Tensor) -> Tensor:
        weight = self.weight
        if (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad) and x.device.type == "cpu"
                and x.dtype == torch.float32 and weight.dtype == torch.float32 and x.dim() >= 2
                and onednn_faster()):
            return _OneDnnLinear.apply(x, weight, self.bias)
        return F.linear(x, weight, self.bias)
