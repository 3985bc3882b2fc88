"""The trainer's loop: train until the steps, a stop or a non-finite loss, with its periodic work and its
start and end events. A mixin of `Trainer` (trainer.py holds the step itself and the checkpoints), so the
loop reads on one page; every attribute it uses is set by `Trainer.__init__`.
"""

from __future__ import annotations

from tui_lab.devices import out_of_memory_line, release_cached_memory
from tui_lab.train.events import DoneEvent, ErrorEvent, Event, StartEvent, StoppedEvent


class RunLoopMixin:
    def run(self) -> Event:
        """Train until `steps`, a stop, or a non-finite loss; returns the last event (done/stopped/error)."""
        c = self.train_config
        self._announce()
        try:
            while self.step_count < c.steps:
                self.control.wait_while_paused()
                if self._stopping():
                    return self._finish_stopped()
                event = self.step()
                if isinstance(event, ErrorEvent):
                    return event
                self._periodic()
            return self._finish_done()
        except Exception as err:
            line = out_of_memory_line(err, self.device, "evaluating or sampling", "try a smaller eval_batches")
            if line is not None:  # the weights are those of the last step: an error event, not a crash
                release_cached_memory(self.device)
                event = ErrorEvent(self.step_count, line)
                self._emit(event)
                return event
            self._emit(ErrorEvent(self.step_count, f"{type(err).__name__}: {err}"))
            raise

    def _stopping(self) -> bool:
        # Under DDP every rank must stop at the same step, so only the all-reduced flag counts.
        return self._stop_agreed if self.dist.enabled else self.control.stopped

    def _periodic(self) -> None:
        c, s = self.train_config, self.step_count
        if c.eval_every and s % c.eval_every == 0 and s < c.steps:
            self.evaluate()
        if c.sample_every and s % c.sample_every == 0:
            self.sample()
        if c.save_every and c.out and s % c.save_every == 0 and s < c.steps:
            self.save(c.out)

    def _finish_done(self) -> DoneEvent:
        c = self.train_config
        last = self.last_eval if self.last_eval and self.last_eval.step == self.step_count else self.evaluate()
        saved = self.save(c.out) if c.out else None
        tokens_per_s, mfu = self._rates()
        done = DoneEvent(self.step_count, self.last_loss, last.val_loss, tokens_per_s, last.exact_match, mfu,
                         str(saved) if saved else None, last.masked_accuracy, last.baseline_accuracy,
                         last.unigram_accuracy, last.accuracy)
        self._emit(done)
        return done

    def _finish_stopped(self) -> StoppedEvent:
        saved = self.save(self.train_config.out) if self.train_config.out else None
        val = self.last_eval.val_loss if self.last_eval else None
        event = StoppedEvent(self.step_count, self.last_loss, val, str(saved) if saved else None)
        self._emit(event)
        return event

    def _rates(self) -> tuple[float, float | None]:
        """tokens/s and MFU over the window (None before the first step)."""
        w = self._window
        if not w["seconds"]:
            return 0.0, None
        per_device = w["flops"] / w["seconds"] / self.dist.world  # achieved FLOP/s of one rank's device
        self._check_peak(per_device)
        return w["tokens"] / w["seconds"], per_device / self.peak_flops

    def _announce(self) -> None:
        if self._started:
            return
        self._started = True
        params = sum(p.numel() for p in self.model.parameters())
        self._emit(StartEvent(self.step_count, self.train_config.steps, self.model_config.to_dict(),
                              self.train_config.to_dict(), params, self.device, self.dist.world, list(self.notes)))

    def _emit(self, event: Event) -> None:
        if self.on_event is not None and self.dist.is_main:
            self.on_event(event)
