"""tokens/s and MFU for one trainer process: every step it ran in one window, against the device's matmul peak.

One window for every figure (step events, the done event, the CLI, the app): a single step's rate swung
120-900 tokens/s on a shared machine. The peak is measured (or read from the cache) when first asked for,
never while the trainer is built, and measured once more if training ever beats a kept figure.
"""

from __future__ import annotations

import torch

from tui_lab.hardware import matmul_peak_flops, remeasure_peak


class Throughput:
    def __init__(self, device: str, dtype: torch.dtype, flops_per_token: int, world: int,
                 peak_flops: float | None = None) -> None:
        self.device, self.dtype, self.flops_per_token, self.world = device, dtype, flops_per_token, world
        self._peak = peak_flops
        self._peak_checked = peak_flops is not None  # a given peak is the caller's; a kept one is checked once
        self.tokens, self.seconds, self.flops = 0, 0.0, 0.0

    @property
    def peak_flops(self) -> float:
        if self._peak is None:
            self._peak = matmul_peak_flops(self.device, self.dtype)
        return self._peak

    def add(self, tokens: int, targets: int, seconds: float) -> None:
        """One step: its tokens, its target (decoder-side) tokens, which the FLOPs count (docs/CONTRACTS.md)."""
        self.tokens, self.seconds = self.tokens + tokens, self.seconds + seconds
        self.flops += targets * self.flops_per_token

    def rates(self) -> tuple[float, float | None]:
        """tokens/s and MFU over the window (None before the first step)."""
        if not self.seconds:
            return 0.0, None
        per_device = self.flops / self.seconds / self.world  # achieved FLOP/s of one rank's device
        self._check_peak(per_device)
        return self.tokens / self.seconds, per_device / self.peak_flops

    def _check_peak(self, flops_per_s: float) -> None:
        """Achieved FLOP/s above the kept peak means that peak was measured under load (or on another
        machine): measure it again, once per run, and keep the higher figure."""
        if not self._peak_checked and flops_per_s > self.peak_flops:
            self._peak_checked = True
            self._peak = remeasure_peak(self.device, self.dtype)
