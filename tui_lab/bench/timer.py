"""The one timer of the lab's measurements: marks after each decoding step, CUDA synchronised at each mark,
polled for a stop and counted for progress."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import torch


class Cancelled(Exception):
    """The person stopped a measurement; what was timed so far stands."""


class StepTimer:
    """Times the steps of decoding runs; `total` runs make up the whole measurement (for progress)."""

    def __init__(self, device: torch.device, total: int, should_stop: Callable[[], bool] | None = None,
                 on_progress: Callable[[int, int], None] | None = None) -> None:
        self.should_stop, self.on_progress = should_stop, on_progress
        self.done, self.total = 0, total
        # the tensors' own GPU: a bare synchronize() waits for the current device, cuda:0, not cuda:1
        self.sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def marks(self, steps: Iterable[object]) -> list[float]:
        """perf_counter before the first step and after each one; Cancelled when a stop is asked."""
        self.sync()
        marks = [time.perf_counter()]
        for _ in steps:
            self.sync()
            marks.append(time.perf_counter())
            if self.should_stop is not None and self.should_stop():
                raise Cancelled
        self.done += 1
        if self.on_progress is not None:
            self.on_progress(self.done, self.total)
        return marks


def intervals(marks: list[float]) -> list[float]:
    """The seconds between consecutive marks."""
    return [b - a for a, b in zip(marks, marks[1:], strict=False)]
