"""One training run of the app: the engine's Trainer in a trainer process, relayed as messages.

The Trainer runs in a child process (`tui_lab.train.process`), so it never shares the app's GIL: in a
thread of the app it lost ~20% of its speed to a UI thread 8-11% busy (tui_lab/openmp.py). A thread
worker here starts the process and reads what it streams (events, the alignment grid) and posts each as
a message (never `call_from_thread`, which blocks the worker until the UI runs it). Pause/resume/stop act
on a SharedRunControl created on the UI thread before the process exists, so a run can start paused
(tests: Pilot waits for idle, which a busy worker never gives). The messages are in `messages`.

A served session's run also keeps a resumable checkpoint in the session's folder as it goes (app/autosave.py), so
a session closed or a server stopped mid-run loses at most the last interval.

Weights cross back only as consistent snapshots: one every SNAPSHOT_EVERY_S while it runs (kept if the
process dies) and the final one, which becomes the live model when the run ends. A process that dies is
one line; the live model stays, and the last snapshot is kept (`w` saves it).

Threads: on 2 cores, torch's default of 2 OpenMP threads beside a busy UI thread collapsed throughput
(spinning workers); OpenMP's spin comes from `tui_lab.openmp` (the child inherits the environment, so the
spin setting reaches it) and the run's thread count is chosen in the child for the load now, again as it
trains (`tui_lab.train.threads`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.worker import Worker, get_current_worker

from tui_lab.app import priority
from tui_lab.app.views.train.messages import RunSaid
from tui_lab.config import ModelConfig
from tui_lab.errors import one_line
from tui_lab.run_control import Controlled
from tui_lab.train.events import Ended, Failed
from tui_lab.train.process import SharedRunControl

if TYPE_CHECKING:
    from tui_lab.train.config import TrainConfig
    from tui_lab.train.process import Snapshot, TrainerProcess

ALIGN_EVERY_S = 1.0  # the numbers-de alignment grid is recomputed at most this often
SNAPSHOT_EVERY_S = 15.0  # a running run's weights are copied back this often (what a crash keeps)
POLL_S = 0.2  # the reader's wait for the next message: how soon a dead process or a quitting app is seen


@dataclass
class LiveWeights:
    """What the live model holds, to continue training it when the run's config and tokenizer match."""

    config: ModelConfig
    model: Any
    tokenizer: Any


class TrainSession(Controlled):
    """UI-thread handle on one run. `start(app)` launches the reader worker; control methods are thread-safe."""

    def __init__(self, run: int, model_config: ModelConfig, train: TrainConfig | tuple[str | None, dict[str, Any]],
                 device: str = "cpu", paused: bool = False, live: LiveWeights | None = None,
                 threads: int | None = None) -> None:
        """`train` is a TrainConfig, or (task, fields) for `train_config_for`, checked in the trainer process."""
        self.run, self.model_config, self.device = run, model_config, device
        self.train_config: TrainConfig | None = train if not isinstance(train, tuple) else None
        self._train = train
        self.live, self.threads = live, threads  # None: the trainer chooses for the load (train/threads.py)
        self.control = SharedRunControl()
        if paused:
            self.control.pause()
        self.process: TrainerProcess | None = None  # set by the worker
        self.ready = False  # the Trainer is built (its Ready was posted)
        self.run_config: ModelConfig | None = None  # the config it really trains (vocab refit to the tokenizer)
        self.tokenizer: Any = None  # the run's tokenizer, from the trainer process
        self.model: Any = None  # the model built from the final snapshot (what became the live model)
        self.crashed: str | None = None  # how the trainer process died, when it did
        self.worker: Worker | None = None
        self.error: str | None = None  # the engine's message for a non-finite loss
        self.ended = False
        self._closed = False
        self._poster: Any = None
        self._example: tuple[str, str] | None = None

    # -- control (any thread) ----------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self.control.paused

    @property
    def stopping(self) -> bool:
        """A stop was asked for: the run ends after the step it is on."""
        return self.control.stopped

    @property
    def active(self) -> bool:
        return not self.ended

    @property
    def snapshot(self) -> Snapshot | None:
        """The last consistent weights the trainer process handed back (kept when it dies)."""
        return self.process.snapshot if self.process is not None else None

    def close(self) -> None:
        """Stop the run and end its process, without waiting (the process may still be starting)."""
        self._closed = True
        self.control.stop()
        process = self.process
        if process is not None:
            threading.Thread(target=process.close, name=f"close train run {self.run}", daemon=True).start()

    def start(self, app: Any) -> Worker:
        """`app`: the widget that receives the messages and owns the worker (the Train view)."""
        self._poster = app
        priority.yield_to_training()  # before the worker exists: it reads messages, UI-side work
        self.worker = app.run_worker(self._work, name=f"train run {self.run}", group="train", thread=True,
                                     exit_on_error=False)
        return self.worker

    def step_once(self) -> bool:
        """One optimizer step in the trainer process, while paused (the app's step mode); False if not ready."""
        if not self.ready or not self.paused or self.ended:
            return False
        self.process.step()
        return True

    def save(self, folder: str) -> Any:
        """The run's resumable checkpoint from the trainer process; once it died, the last snapshot's weights."""
        if self.process is not None and self.process.alive:
            return self.process.save(folder)
        if self.snapshot is None or self.tokenizer is None:
            raise ValueError("nothing to save: the trainer process ended before it handed back any weights")
        from tui_lab.checkpoint import save_checkpoint
        from tui_lab.train.process import model_from_snapshot

        model = model_from_snapshot(self.run_config, self.snapshot)
        return save_checkpoint(folder, model, self.tokenizer,
                               meta={"origin": f"run #{self.run}, snapshot at step {self.snapshot.step}"})

    def example_text(self) -> tuple[str, str] | None:
        """The held-out example the alignment grid shows, as (source, target) text; None for text runs."""
        return self._example

    # -- worker thread -----------------------------------------------------------------------------
    def _post(self, message: Message) -> None:
        self._poster.post_message(message)

    def _work(self) -> None:
        """The run, holding one of a served server's training slots (one run per core) while it trains."""
        from tui_lab.served import ServedPolicy, training_slot

        try:
            slot = training_slot(ServedPolicy.from_env())
            slot.__enter__()
        except ValueError as err:
            self._fail(one_line(err))
            return
        try:
            self._run_training()
        finally:
            slot.__exit__(None, None, None)

    def _run_training(self) -> None:
        from tui_lab.app.autosave import run_keeping
        from tui_lab.train.process import TrainerProcess, TrainerSpec

        live = self.live
        try:
            self._check_memory()
        except ValueError as err:
            self._fail(one_line(err))
            return
        state = None
        if live is not None and live.model is not None:
            state = {k: v.detach().to("cpu", copy=True) for k, v in live.model.state_dict().items()}
        spec = TrainerSpec(self.model_config, self._train, self.device, self.threads,
                           live.config if live else None, state, live.tokenizer if live else None, ALIGN_EVERY_S,
                           **run_keeping())  # a served session's run keeps itself in its folder as it goes
        self.process = process = TrainerProcess(spec, self.control)
        try:
            priority.spawn(process.start)  # the trainer starts at the app's original priority
        except Exception as err:  # noqa: BLE001 - a run that cannot start is a message, never a crash
            self._fail(one_line(err))
            return
        if self._closed:  # closed while it was starting: `close` may have found no process to end
            self.ended = True
            process.close()
            return
        next_snapshot = time.monotonic() + SNAPSHOT_EVERY_S
        while not self.ended:
            if _cancelled():  # the app is quitting
                self.ended = True
                process.close()
                return
            message = process.poll(POLL_S)
            if message is not None:
                self._handle(process, message)
            elif not process.alive:
                self._died(process)
            elif self.ready and time.monotonic() >= next_snapshot:
                process.request_snapshot()  # copied back by a later poll
                next_snapshot = time.monotonic() + SNAPSHOT_EVERY_S

    def _handle(self, process: TrainerProcess, message: Any) -> None:
        kind = message.kind
        if kind == "ready":
            self._ready(message)
        elif kind == "failed":
            self._fail(message.error)
            process.close()
        elif kind == "ended":
            self._ended(process, message)
        else:  # an engine event, an alignment grid or a note, as the trainer sent it
            if kind == "error":
                self.error = message.message
            self._post(RunSaid(self.run, message))

    def _ready(self, ready: Any) -> None:
        self.train_config = ready.train_config
        self.run_config, self.tokenizer, self._example = ready.model_config, ready.tokenizer, ready.example
        self.ready = True
        self._post(RunSaid(self.run, ready))

    def _ended(self, process: TrainerProcess, ended: Any) -> None:
        from tui_lab.train.process import model_from_snapshot

        try:
            self.model = model_from_snapshot(self.run_config, process.fetch_snapshot(), self.device)
        except Exception as err:  # noqa: BLE001 - died before handing back the weights
            self._died(process, one_line(err))
            return
        self.ended = True
        # The run's own error, when it had one, is what it ended with; its last good weights are `self.model`.
        outcome = Ended("error", self.error, ended.step) if self.error else ended
        self._post(RunSaid(self.run, outcome))

    def _check_memory(self) -> None:
        """The trainer process's weights, gradients, moments and activations, and the live weights copied to hand
        over, must fit what is free: the form's batch and seq len take any number, and a process past the
        machine's memory is ended by the kernel with nothing to say."""
        from tui_lab.analysis.budget import training_budget
        from tui_lab.analysis.cost import memory
        from tui_lab.devices import check_free
        from tui_lab.train.config import train_config_for

        train, live = self._train, self.live
        if isinstance(train, tuple):  # the form's (task, fields); a field it refuses is the trainer process's line
            try:
                train = train_config_for(train[0], **train[1])
            except (TypeError, ValueError):
                return
        need = training_budget(self.model_config, 0, train.batch_size, train.seq_len).bytes
        need += memory(live.config).weights if live is not None and live.model is not None else 0
        check_free(need, self.device, f"training batch {train.batch_size:,} x seq len {train.seq_len:,}",
                   "lower batch or seq len")

    def _fail(self, error: str) -> None:
        self.ended = True
        self._post(RunSaid(self.run, Failed(error)))

    def _died(self, process: TrainerProcess, why: str | None = None) -> None:
        """The trainer process is gone without ending the run: one line; the live model stays."""
        snapshot = process.snapshot
        kept = f"the last snapshot (step {snapshot.step}) is kept: w saves it" if snapshot else "no snapshot was taken"
        self.crashed = why or f"the trainer process died ({process.describe_exit()})"
        self._fail(f"{self.crashed}; the live model is unchanged; {kept}")


def _cancelled() -> bool:
    try:
        return get_current_worker().is_cancelled
    except Exception:  # noqa: BLE001 - not on a worker thread (a direct call in a test)
        return False
