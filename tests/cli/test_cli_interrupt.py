"""Ctrl-C in `tui-lab train` and `tui-lab experiment run`: the first stops the run between steps, the second
interrupts, and the handler before is back afterwards (a real SIGINT to this process)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from tui_lab.cli.interrupt import stop_on_interrupt
from tui_lab.run_control import RunControl


def test_first_ctrl_c_stops_the_run_the_second_interrupts_and_the_old_handler_returns():
    control, survived_first = RunControl(), []
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), stop_on_interrupt(control):
        os.kill(os.getpid(), signal.SIGINT)
        survived_first.append(control.stopped)
        os.kill(os.getpid(), signal.SIGINT)  # the usual KeyboardInterrupt
        raise AssertionError("the second Ctrl-C did not interrupt")
    assert survived_first == [True]  # the first one stopped the run and did not interrupt
    assert signal.getsignal(signal.SIGINT) is before


def test_off_the_main_thread_no_handler_is_installed():
    control, seen = RunControl(), []

    def worker() -> None:
        with stop_on_interrupt(control):
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [before] and not control.stopped
