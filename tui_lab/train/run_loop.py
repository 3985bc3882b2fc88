"""The trainer's loop: train until the steps, a stop or a non-finite loss, with its periodic work (evaluation,
samples, checkpoints) and its start and end events.

An object the Trainer owns (`Trainer.run()` hands over to it): it drives the Trainer through the same calls a
script or the app's step mode makes (`step`, `evaluate`, `sample`, `save`) and reads its counters, so the
loop reads on one page and the step itself stays in trainer.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from tui_lab.checkpoint import SaveError
from tui_lab.devices import out_of_memory_line, release_cached_memory
from tui_lab.run_control import RunControl
from tui_lab.train.config import TrainConfig
from tui_lab.train.events import DoneEvent, ErrorEvent, EvalEvent, Event, SampleEvent, StepEvent, StoppedEvent


class Trains(Protocol):
    """What the loop asks of a trainer (tui_lab.train.trainer.Trainer is the one)."""

    train_config: TrainConfig
    control: RunControl
    device: str
    step_count: int
    last_loss: float | None
    last_eval: EvalEvent | None

    def step(self) -> StepEvent | ErrorEvent: ...
    def evaluate(self) -> EvalEvent: ...
    def sample(self) -> SampleEvent | None: ...
    def save(self, folder: str | Path | None = None) -> Path | None: ...
    def stopping(self) -> bool: ...
    def rates(self) -> tuple[float, float | None]: ...
    def announce(self) -> None: ...
    def emit(self, event: Event) -> None: ...


class RunLoop:
    def __init__(self, trainer: Trains) -> None:
        self.trainer = trainer

    def run(self) -> Event:
        """Train until `steps`, a stop, or a non-finite loss; returns the last event (done/stopped/error)."""
        t = self.trainer
        t.announce()
        try:
            while t.step_count < t.train_config.steps:
                t.control.wait_while_paused()
                if t.stopping():
                    return self._finish_stopped()
                event = t.step()
                if isinstance(event, ErrorEvent):
                    return event
                self._periodic()
            return self._finish_done()
        except SaveError as err:  # the disk refused the checkpoint: the run is rescued or named lost, in one line
            return self._error(ErrorEvent(t.step_count, str(err)))
        except Exception as err:
            line = out_of_memory_line(err, t.device, "evaluating or sampling", "try a smaller eval_batches")
            if line is not None:  # the weights are those of the last step: an error event, not a crash
                release_cached_memory(t.device)
                return self._error(ErrorEvent(t.step_count, line))
            t.emit(ErrorEvent(t.step_count, f"{type(err).__name__}: {err}"))
            raise

    def _error(self, event: ErrorEvent) -> ErrorEvent:
        self.trainer.emit(event)
        return event

    def _periodic(self) -> None:
        t = self.trainer
        c, s = t.train_config, t.step_count
        if c.eval_every and s % c.eval_every == 0 and s < c.steps:
            t.evaluate()
        if c.sample_every and s % c.sample_every == 0:
            t.sample()
        if c.save_every and c.out and s % c.save_every == 0 and s < c.steps:
            t.save(c.out)

    def _finish_done(self) -> DoneEvent:
        t = self.trainer
        c = t.train_config
        last = t.last_eval if t.last_eval and t.last_eval.step == t.step_count else t.evaluate()
        saved = t.save(c.out) if c.out else None
        tokens_per_s, mfu = t.rates()
        done = DoneEvent(t.step_count, t.last_loss, last.val_loss, tokens_per_s, last.exact_match, mfu,
                         str(saved) if saved else None, last.masked_accuracy, last.baseline_accuracy,
                         last.unigram_accuracy, last.accuracy)
        t.emit(done)
        return done

    def _finish_stopped(self) -> StoppedEvent:
        t = self.trainer
        saved = t.save(t.train_config.out) if t.train_config.out else None
        val = t.last_eval.val_loss if t.last_eval else None
        event = StoppedEvent(t.step_count, t.last_loss, val, str(saved) if saved else None)
        t.emit(event)
        return event
