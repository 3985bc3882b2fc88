"""Ctrl-C during a long run: the first asks the run to stop between steps, a second interrupts as usual."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


@contextmanager
def stop_on_interrupt(run: Stoppable) -> Iterator[None]:
    """While the block runs, the first Ctrl-C calls `run.stop()` (a trainer still writes its checkpoint, an
    experiment cancels between steps); the second raises the usual KeyboardInterrupt. The handler before is
    back afterwards. Signal handlers belong to the main thread: elsewhere the block runs without one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        run.stop()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
