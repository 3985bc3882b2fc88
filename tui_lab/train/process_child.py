"""The trainer process's side (tui_lab/train/process.py starts it): build, run, stream, serve commands.

Two threads. The main thread runs `Trainer.run()`, looking at the shared RunControl between steps. A
command thread serves the parent: one step (step mode, while paused), a weights snapshot, a save. A
snapshot or a save must see the weights between two steps, so it runs as a job at a step boundary:
under the trainer's step lock when it is free (paused, ended), else by the training thread itself right
after the step it is in (the step event is emitted inside the lock, after the optimizer update).
The command thread also watches the parent: when it is gone the run stops, so no trainer is orphaned.

A run given a `keep` folder keeps its resumable checkpoint there as it goes and once more when it stops
(tui_lab/train/keep.py). SIGTERM (a served session's process group ended, the app's exit) stops the run the
same way, so that last checkpoint is written; the process ends within TERM_GRACE_S of it whatever happens, and a
second SIGTERM ends it at once.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.errors import one_line
from tui_lab.train import events as msg
from tui_lab.train.keep import KEEP_EVERY_S, Keeper
from tui_lab.train.watch import alignment_example, cross_attention, lr_curve, tokens_per_step

COMMAND_POLL_S = 0.5
JOB_POLL_S = 0.05
TERM_GRACE_S = 3.0  # after SIGTERM: the step in flight and the last kept checkpoint, then the process ends


@dataclass
class TrainerSpec:
    """Everything a trainer process needs to build its Trainer (picklable: it crosses to the child)."""

    model_config: ModelConfig
    train: Any  # a TrainConfig, or (task, fields) for train_config_for, checked in the child
    device: str = "cpu"
    threads: int | None = None  # torch's intra-op threads in the child (None: chosen for the load, train/threads.py)
    live_config: ModelConfig | None = None  # weights to continue from, when they fit the run's model
    live_state: dict[str, Any] | None = field(default=None, repr=False)  # CPU tensors
    live_tokenizer: Any = None
    alignment_every_s: float = 1.0  # seq2seq: the held-out example's cross-attention, at most this often
    keep: str | None = None  # a folder the run keeps its resumable checkpoint in as it goes (train/keep.py)
    keep_every_s: float = KEEP_EVERY_S
    keep_room: Callable[[int, str], None] | None = None  # a served session's quota check (picklable)


def main(spec: TrainerSpec, control: Any, messages: Any, commands: Any) -> None:
    """The child's entry point."""
    import torch

    if spec.threads:
        torch.set_num_threads(spec.threads)
    child = Child(spec, control, messages)
    signal.signal(signal.SIGTERM, child.terminate)
    try:
        child.build()
    except Exception as err:  # noqa: BLE001 - a run that cannot start is a message, never a traceback
        messages.put(msg.Failed(one_line(err)))
        return
    server = threading.Thread(target=child.serve, args=(commands,), name="trainer commands", daemon=True)
    server.start()
    child.run()
    server.join()  # keep serving (saves, the final snapshot) until the parent closes the process
    messages.close()
    if child.terminated:
        messages.cancel_join_thread()  # the parent may be gone: a full pipe would never drain
    else:
        messages.join_thread()  # everything sent has reached the pipe
    os._exit(0)  # skip the interpreter's teardown of torch: seconds on a busy machine, and nothing to keep


class Child:
    def __init__(self, spec: TrainerSpec, control: Any, messages: Any) -> None:
        self.spec, self.control, self.messages = spec, control, messages
        self.trainer: Any = None
        self.buffers: dict[str, Any] = {}
        self.error: str | None = None
        self.ended = False
        self.terminated = False  # SIGTERM arrived
        self.keeper: Keeper | None = None
        self.threads: Any = None  # a TrainThreads when the spec left the count to the load
        self._example: tuple[list[int], list[int]] | None = None
        self._last_align = 0.0
        self._jobs: list[Callable[[], None]] = []
        self._jobs_lock = threading.Lock()

    # -- building ----------------------------------------------------------------------------------
    def build(self) -> None:
        import torch

        from tui_lab.train import Trainer, train_config_for

        spec = self.spec
        train = spec.train if not isinstance(spec.train, tuple) else train_config_for(spec.train[0], **spec.train[1])
        tokenizer = spec.live_tokenizer if train.task is None else None
        trainer = Trainer(spec.model_config, train, device=spec.device, on_event=self.on_event, tokenizer=tokenizer)
        trainer.control = self.control  # pause/stop pressed while it was being built still count
        continued = spec.live_state is not None and _fits(spec, trainer)
        if continued:
            with torch.no_grad():
                trainer.model.load_state_dict(spec.live_state)
        spec.live_state = None  # the parent's copy: not needed any more
        self.trainer, self._example = trainer, alignment_example(trainer)
        if spec.keep:
            self.keeper = Keeper(Path(spec.keep), spec.keep_every_s, spec.keep_room)
        if not spec.threads:  # the count follows the machine's load from here on (train/threads.py)
            from tui_lab.train.threads import TrainThreads

            self.threads = TrainThreads(trainer)
            self.threads.apply()
        self.buffers = {k: v.detach().to("cpu", copy=True).share_memory_()
                        for k, v in trainer.model.state_dict().items()}
        self.messages.put(msg.Buffers(self.buffers))
        example = None
        if self._example is not None:
            example = (trainer.tokenizer.decode(self._example[0]), trainer.tokenizer.decode(self._example[1]))
        self.messages.put(msg.Ready(trainer.model_config, train, list(trainer.notes), lr_curve(trainer),
                                    sum(p.numel() for p in trainer.model.parameters()), continued,
                                    tokens_per_step(trainer), trainer.flops_per_token, trainer.peak_flops,
                                    trainer.tokenizer, example))

    # -- the run (main thread) ---------------------------------------------------------------------
    def run(self) -> None:
        outcome, message = "error", ""
        try:
            last = self.trainer.run()
            outcome, message = last.kind, self.error or _summary(last)
            if self.keeper is not None:
                self._note(self.keeper.final(self.trainer))
        except Exception as err:  # noqa: BLE001 - the trainer already kept the last good weights
            message = one_line(err)
        self.ended = True
        self.messages.put(msg.Ended("error" if self.error else outcome, message, self.trainer.step_count))

    def on_event(self, event: Any) -> None:
        """Called by the trainer (inside its step lock for step events)."""
        if event.kind == "error":
            self.error = event.message
            self.control.stop()  # step mode: wake the paused loop so the run ends
        self.messages.put(event)  # as it is: plain data, pickled by the queue
        if event.kind != "step":
            return
        if self._example is not None and time.monotonic() - self._last_align >= self.spec.alignment_every_s:
            self._last_align = time.monotonic()
            grid, rows, cols = cross_attention(self.trainer, self._example)
            self.messages.put(msg.Alignment(event.step, grid, rows, cols))
        self._run_jobs()  # a step boundary: the weights are those of step `event.step`
        if self.threads is not None:
            self.threads.between_steps()
        if self.keeper is not None:
            self._note(self.keeper.due(self.trainer))

    def _note(self, text: str | None) -> None:
        if text:
            self.messages.put(msg.Note(text))

    def terminate(self, signum: int, frame: Any) -> None:
        """SIGTERM (main thread, between bytecodes): stop the run so it keeps its last step, and end the process
        within TERM_GRACE_S. The stop goes through a thread: the main thread may hold the control's own lock."""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        self.terminated = True
        threading.Thread(target=self.control.stop, name="stop on SIGTERM", daemon=True).start()
        deadline = threading.Timer(TERM_GRACE_S, os._exit, (128 + signal.SIGTERM,))
        deadline.daemon = True
        deadline.start()

    # -- commands (command thread) -----------------------------------------------------------------
    def serve(self, commands: Any) -> None:
        parent = multiprocessing.parent_process()
        while True:
            try:
                name, *args = commands.get(timeout=COMMAND_POLL_S)
            except queue.Empty:
                if self.terminated and self.ended:
                    return  # ended by SIGTERM: nobody will send "close"
                if parent is not None and not parent.is_alive():
                    self.control.stop()  # nobody is watching: end the run, and the process with it
                    return
                continue
            if name == "close":
                self.control.stop()
                return
            getattr(self, f"_{name}")(*args)

    def _step(self) -> None:
        if self.ended or not self.control.paused:
            return
        trainer = self.trainer
        try:
            event = trainer.step()
            every = trainer.train_config.eval_every
            if event.kind == "step" and every and trainer.step_count % every == 0:
                trainer.evaluate()
        except Exception as err:  # noqa: BLE001 - shown, and the run keeps its last good weights
            self.messages.put(msg.ErrorEvent(trainer.step_count, one_line(err)))

    def _snapshot(self) -> None:
        self._at_boundary(self._write_snapshot)

    def _save(self, request: int, folder: str) -> None:
        def save() -> None:
            try:
                self.messages.put(msg.Reply(request, path=str(self.trainer.save(folder))))
            except Exception as err:  # noqa: BLE001 - one line for the parent to show
                self.messages.put(msg.Reply(request, path=folder, error=one_line(err)))

        self._at_boundary(save)

    # -- jobs at a step boundary -------------------------------------------------------------------
    def _at_boundary(self, job: Callable[[], None]) -> None:
        with self._jobs_lock:
            self._jobs.append(job)
        lock = self.trainer._lock  # noqa: SLF001 - the engine's step lock is the step boundary
        while True:
            if lock.acquire(timeout=JOB_POLL_S):
                try:
                    self._run_jobs()
                finally:
                    lock.release()
                return
            with self._jobs_lock:
                if job not in self._jobs:
                    return  # the training thread ran it after its step

    def _run_jobs(self) -> None:
        with self._jobs_lock:
            jobs, self._jobs = self._jobs, []
        for job in jobs:
            job()

    def _write_snapshot(self) -> None:
        import torch

        with torch.no_grad():
            for name, tensor in self.trainer.model.state_dict().items():
                self.buffers[name].copy_(tensor)
        self.messages.put(msg.SnapshotReady(self.trainer.step_count))


def _fits(spec: TrainerSpec, trainer: Any) -> bool:
    """The given weights fit this run: the same config, and the same tokens behind the ids."""
    if spec.live_config != trainer.model_config:
        return False
    if spec.live_tokenizer is None:
        return True  # random weights of the same shape: continuing is just another starting point
    ids = list(range(trainer.model_config.vocab))
    try:
        return spec.live_tokenizer.token_strings(ids) == trainer.tokenizer.token_strings(ids)
    except (ValueError, AttributeError, IndexError):
        return False


def _summary(event: Any) -> str:
    parts = [f"{event.kind} at step {event.step}"]
    for name in ("train_loss", "val_loss", "exact_match"):
        value = getattr(event, name, None)
        if value is not None:
            parts.append(f"{name.replace('_', ' ')} {value:.4g}")
    return ", ".join(parts)
