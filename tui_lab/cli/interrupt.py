"""Ctrl-C during long work: a handler of our own while a block runs, the one before back afterwards.

`stop_on_interrupt(run)`: the first Ctrl-C asks a run to stop between steps, a second interrupts as usual
(`tui-lab train`, `tui-lab experiment run`); `model_args` answers Ctrl-C during a download with `on_sigint`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


@contextmanager
def on_sigint(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """`handler` answers Ctrl-C while the block runs. Signal handlers belong to the main thread: elsewhere the
    block runs without one (a caller there stops its work another way)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def stop_on_interrupt(run: Stoppable) -> Iterator[None]:
    """The first Ctrl-C calls `run.stop()` (a trainer still writes its checkpoint, an experiment cancels between
    steps); the second raises the usual KeyboardInterrupt."""

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        run.stop()

    with on_sigint(handler):
        yield
