"""Train in a separate process: the parent keeps its own GIL and cores' share; the run streams back.

Why: a UI thread 8-11% busy cost in-app training ~20% through the GIL when the Trainer ran in a thread of
the app (tui_lab/openmp.py). A child process started with the spawn method (the same on Linux and
macOS; a forked child would inherit the app's threads and terminal) builds the Trainer and runs it
(tui_lab/train/process_child.py); its events stream back over a queue as `to_dict()` data.

    proc = TrainerProcess(TrainerSpec(model_config, train_config)); proc.start()
    while (message := proc.poll(0.5)) is None or message.kind not in ("ended", "failed"): ...
    weights = proc.fetch_snapshot()            # consistent: taken between two steps
    proc.close()

Control: `proc.control` is a SharedRunControl, the RunControl interface over multiprocessing Events, so
pause/resume/stop act at once from any thread of the parent and the child's loop sees them between steps;
`proc.step()` runs one step while paused; `proc.save(folder)` writes the run's resumable checkpoint.

Weights come back as snapshots, never as live tensors. The child allocates one set of shared-memory CPU
buffers and writes the weights into them only when asked, at a step boundary (from CUDA or MPS this is
a device-to-host copy: the buffers are CPU memory either way, so no checkpoint hand-off through the disk
is needed). The parent asks for at most one snapshot at a time and copies the buffers into tensors of
its own before it may ask again, so a reader never sees a half-written snapshot, and the last snapshot
survives the child (a killed child can tear only a write nobody has been told is ready).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_lab.openmp import SET_BY_US as OPENMP_SET_BY_APP
from tui_lab.run_control import Controlled, RunControl
from tui_lab.train import events as msg
from tui_lab.train.process_child import TrainerSpec

__all__ = ["SharedRunControl", "Snapshot", "TrainerProcess", "TrainerSpec", "model_from_snapshot"]

CONTEXT = "spawn"


@contextlib.contextmanager
def _child_environment():
    """os.environ as the spawned child inherits it (spawn copies it at start), restored after.

    The app sets a short OpenMP spin for threads that share its process (tui_lab/openmp.py) and
    names those variables in OPENMP_SET_BY_APP. A trainer in its own process shares only the cores, and
    there libgomp's default spin measured better on 2 cores (benchmarks/interface/ui_latency.py, 4 runs each,
    alternating: in-app / headless 0.89, 0.90, 0.75, 0.91 with the default against 0.83, 0.74, 0.80, 0.93
    with the short spin; key-to-screen p95 27-61 ms against 34-54 ms). A person's own settings are kept.
    """
    changes = {key: None for key in os.environ.get(OPENMP_SET_BY_APP, "").split(",") if key}
    saved = {key: os.environ.get(key) for key in changes}
    try:
        for key, value in changes.items():
            _set_env(key, value)
        yield
    finally:
        for key, value in saved.items():
            _set_env(key, value)


def _set_env(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


CLOSE_GRACE_S = 5.0


class SharedRunControl(RunControl):
    """RunControl whose pause and stop flags are multiprocessing Events: set in one process, seen in both."""

    def __init__(self) -> None:  # torch-free: the app makes one before torch has loaded
        ensure_resource_tracker()  # the Events' semaphores register with it
        ctx = multiprocessing.get_context(CONTEXT)
        self._running = ctx.Event()  # set = not paused
        self._running.set()
        self._stop = ctx.Event()


def ensure_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, handing it the real stderr.

    The tracker is given sys.stderr's descriptor; inside a Textual app sys.stderr is a capture without
    one, and starting it there fails with "bad value(s) in fds_to_keep" (tui_lab/cli/launch.py starts it
    before the app takes the terminal; tests and benchmarks drive the app without that launcher)."""
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable or sys.__stderr__ is None:
        resource_tracker.ensure_running()
        return
    captured, sys.stderr = sys.stderr, sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


@dataclass(frozen=True)
class Snapshot:
    step: int  # the weights after this many optimizer steps
    state: dict[str, Any]  # name -> CPU tensor owned by the parent (never written again)


class TrainerProcess(Controlled):
    """Parent-side handle on one trainer process. Thread-safe: one thread may poll while another saves."""

    def __init__(self, spec: TrainerSpec, control: SharedRunControl | None = None) -> None:
        self.spec = spec
        self.control = control or SharedRunControl()
        self.snapshot: Snapshot | None = None  # the last one fetched
        self.finished = False  # "ended" or "failed" arrived
        self._process: Any = None
        self._messages: Any = None
        self._commands: Any = None
        self._buffers: dict[str, Any] | None = None
        self._asked = False  # a snapshot was requested and is not copied yet
        self._inbox: deque = deque()
        self._replies: dict[int, msg.Reply] = {}
        self._requests = itertools.count(1)
        self._read_lock = threading.Lock()
        self._ask_lock = threading.Lock()

    # -- lifetime ----------------------------------------------------------------------------------
    def start(self) -> None:
        import torch.multiprocessing as tmp  # its queue pickler shares CPU tensors through shared memory

        from tui_lab.train.process_child import main

        ctx = tmp.get_context(CONTEXT)
        self._messages, self._commands = ctx.Queue(), ctx.Queue()
        self._process = ctx.Process(target=main, args=(self.spec, self.control, self._messages, self._commands),
                                    name="tui-lab trainer", daemon=True)
        with _child_environment():
            self._process.start()
        self.spec.live_state = None  # pickled into the child at start; the parent's copy can go

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def exitcode(self) -> int | None:
        return None if self._process is None else self._process.exitcode

    def close(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Stop the run and end the process (SIGTERM after `grace_s`, SIGKILL after another). Blocks up to
        ~3 x grace_s; a trainer ends within process_child.TERM_GRACE_S of SIGTERM, keeping its run if it keeps one."""
        self.control.stop()
        if self._process is None:
            return
        if self._process.is_alive():
            self._commands.put(("close",))
            self._process.join(grace_s)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(grace_s)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(grace_s)
        self._commands.cancel_join_thread()  # a dead child never reads what is left

    def describe_exit(self) -> str:
        """How the process ended, for a one-line report ("killed by SIGKILL", "exit code 1")."""
        code = self.exitcode
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    # -- control (pause / resume / stop: Controlled) ------------------------------------------------
    def step(self) -> None:
        """One optimizer step (and its evaluation when due), while paused; ignored otherwise."""
        self._commands.put(("step",))

    # -- messages ----------------------------------------------------------------------------------
    def poll(self, timeout: float = 0.0) -> Any:
        """The next message for the caller (Ready, an engine Event, Alignment, Ended, Failed), or None."""
        if not self._inbox:
            self._pump(timeout)
        return self._inbox.popleft() if self._inbox else None

    def _pump(self, timeout: float) -> None:
        """Read one message from the queue and file it (in order: one reader at a time)."""
        if self._messages is None or not self._read_lock.acquire(timeout=max(timeout, 0.001)):
            return
        try:
            message = self._messages.get(timeout=timeout) if timeout > 0 else self._messages.get_nowait()
            self._file(message)
        except queue.Empty:
            pass
        finally:
            self._read_lock.release()

    def _file(self, message: Any) -> None:
        if message.kind == "buffers":
            self._buffers = message.tensors
        elif message.kind == "snapshot":
            state = {name: tensor.clone() for name, tensor in self._buffers.items()}
            self.snapshot, self._asked = Snapshot(message.step, state), False
        elif message.kind == "reply":
            self._replies[message.request] = message
        else:
            self.finished = self.finished or message.kind in ("ended", "failed")
            self._inbox.append(message)

    # -- weights -----------------------------------------------------------------------------------
    def request_snapshot(self) -> bool:
        """Ask for a snapshot without waiting (it lands in `self.snapshot` when a poll reads it)."""
        with self._ask_lock:
            if self._asked or self._buffers is None or not self.alive:
                return False
            self._asked = True
        self._commands.put(("snapshot",))
        return True

    def fetch_snapshot(self, timeout: float = 60.0) -> Snapshot:
        """The weights at the next step boundary (blocks; ValueError if the process cannot answer)."""
        deadline = time.monotonic() + timeout
        while self._buffers is None and self.alive and time.monotonic() < deadline:
            self._pump(0.05)  # the buffers come right after the Trainer is built
        before = self.snapshot
        self.request_snapshot()
        self._wait(lambda: self.snapshot is not before and not self._asked, deadline, "a weights snapshot")
        return self.snapshot

    def save(self, folder: str | Path, timeout: float = 600.0) -> Path:
        """The run's resumable checkpoint (weights, optimizer, RNG), written by the child between two steps."""
        request = next(self._requests)
        self._commands.put(("save", request, str(folder)))
        self._wait(lambda: request in self._replies, time.monotonic() + timeout, "the save")
        reply = self._replies.pop(request)
        if reply.error:
            raise ValueError(reply.error)
        return Path(reply.path)

    def _wait(self, done: Any, deadline: float, what: str) -> None:
        while not done():
            if not self.alive:
                self._pump(0.05)  # what it sent before it died
                if done():
                    return
                raise ValueError(f"the trainer process ended ({self.describe_exit()}) before {what}")
            if time.monotonic() > deadline:
                raise ValueError(f"the trainer process did not answer {what} in time")
            self._pump(0.05)


def model_from_snapshot(config: Any, snapshot: Snapshot, device: str = "cpu") -> Any:
    """A model of `config` on `device` holding the snapshot's weights, in eval mode (the global RNG untouched)."""
    import torch

    from tui_lab.model import build_model

    with torch.random.fork_rng(devices=[]):
        model = build_model(config, device=device)
    with torch.no_grad():
        model.load_state_dict(snapshot.state)
    return model.eval()
