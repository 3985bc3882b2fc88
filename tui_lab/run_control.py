"""Pause, resume and stop from another thread; the training loop looks at them between steps.

Torch-free on purpose: the app creates one on the UI thread before torch has loaded.
"""

from __future__ import annotations

import threading


class RunControl:
    def __init__(self) -> None:
        self._running = threading.Event()  # set = not paused
        self._running.set()
        self._stop = threading.Event()

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        self._stop.set()
        self._running.set()  # wake a paused loop so it can see the stop

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def wait_while_paused(self, poll_s: float = 0.1) -> None:
        """Block while paused; returns at once when running or stopped."""
        while not self._running.wait(poll_s):
            pass


class Controlled:
    """pause / resume / stop forwarded to `self.control`: the trainer, its process handle and the app's session
    each hold a RunControl and answer the same three calls."""

    control: RunControl

    def pause(self) -> None:
        self.control.pause()

    def resume(self) -> None:
        self.control.resume()

    def stop(self) -> None:
        self.control.stop()
