"""What the Train view does with its run's messages: ready (ask before a long run), steps, evals, the end.

A mixin of TrainView (which provides `store`, `session`, `stats`, `dirty`, `_hold`, `_step_ema`, `_say`,
`_after_run` and `_alignment_arrived`). A message from a run other than the session's own is dropped. The
trainer is built held paused; `on_train_ready` releases it, or first asks when the estimate says the run is
long. When a run ends trained, its last good weights become the live model.
"""

from __future__ import annotations

from textual.widgets import Button

from tui_lab.app.modals.confirm_run import ConfirmLongRun
from tui_lab.app.runs import label_runs
from tui_lab.app.views.train.messages import Alignment, TrainEnded, TrainEvent, TrainFailed, TrainReady
from tui_lab.app.views.train.notes import confirm_text, vocab_note


class TrainMessages:
    def _mine(self, run: int) -> bool:
        return self.session is not None and run == self.session.run

    def on_train_ready(self, message: TrainReady) -> None:
        if not self._mine(message.run):
            return
        run = self.store.current
        run.model = message.model_config.to_dict()
        run.train = self.session.config.to_dict()
        label_runs(self.store.runs)  # now with every field of the real configs
        self.stats["lr_curve"] = message.lr_curve
        start = "continuing the live weights" if message.continued else "fresh weights"
        tokenizer = self.session.tokenizer  # None for a ViT: images have no vocabulary to swap
        swap = vocab_note(self.session.model_config, message.model_config, tokenizer.kind) if tokenizer else None
        notes = "; ".join(([swap] if swap else []) + list(message.notes))
        self._say(f"run #{run.number}: {message.params:,} params, {start}" + (f"; {notes}" if notes else ""))
        if notes:
            self.notify(notes + " - the live model is rebuilt for it when the run ends", title="train")
        self.dirty = True
        question = confirm_text(run.number, message.estimate, self.session.device)
        if question and self._hold == "run":
            self.app.push_screen(ConfirmLongRun(question), self._confirmed)
        else:
            self._release()

    def _confirmed(self, start: bool | None) -> None:
        if start:
            self._release()
        elif self.training:
            self.session.stop()
            self._say("cancelled before the first step: lower steps or batch for a shorter run", "bold")

    def _release(self) -> None:
        """Let the held run go, unless the person asked for it paused (or paused it meanwhile)."""
        hold, self._hold = self._hold, None
        if hold == "run" and self.training:
            self.session.resume()

    def on_train_event(self, message: TrainEvent) -> None:
        if not self._mine(message.run):
            return
        event, run = message.event, self.store.current
        if event.kind == "step":
            run.loss.append((event.step, event.train_loss))
            run.lr.append((event.step, event.lr))
            run.tokens_per_s.append(event.tokens_per_s)
            if event.teacher_forcing is not None:
                run.teacher_forcing.append((event.step, event.teacher_forcing))
            self._step_ema = event.step_s if self._step_ema is None else 0.8 * self._step_ema + 0.2 * event.step_s
            self.stats.update(step=event.step, loss=event.train_loss, lr=event.lr, tps=event.tokens_per_s,
                              mfu=event.mfu, grads=event.layer_grad_norms, grad_norm=event.grad_norm,
                              aux=event.aux_loss, expert_load=event.expert_load)
        elif event.kind == "eval":
            run.val_loss.append((event.step, event.val_loss))
            self.stats.update(val=event.val_loss, exact=event.exact_match)
        elif event.kind == "sample":
            target = f"\n  reference: {event.target}" if event.target is not None else ""
            self.stats["sample"] = f"step {event.step}: {event.prompt!r} ->\n  {event.text}{target}"
        elif event.kind == "error":
            self._say(event.message, "bold red")
            self.notify(event.message, title="training stopped", severity="error", timeout=10)
        self.dirty = True

    def on_alignment(self, message: Alignment) -> None:
        if self._mine(message.run):
            self._alignment_arrived(message.step, message.grid, message.rows, message.cols)

    def on_train_failed(self, message: TrainFailed) -> None:
        if not self._mine(message.run):
            return
        if self.session.ended:
            self.store.current.status = "failed"
        self._say(f"run #{message.run}: {message.error}", "bold red")
        self.notify(message.error, title="train", severity="error", timeout=10)
        if self.session.ended:
            self._after_run()  # a quit waiting for the run goes ahead

    def on_train_ended(self, message: TrainEnded) -> None:
        if not self._mine(message.run):
            return
        from tui_lab.app.live_model import ModelReady
        from tui_lab.app.origin import task_label, trained_origin

        run = self.store.current
        run.status = message.outcome
        if message.step == 0 and message.outcome == "stopped":  # cancelled: untrained weights replace nothing
            self._say(f"run #{message.run} cancelled before its first step; the live model is unchanged", "bold")
        else:
            done = self.session.train_config  # built before any step, so set whenever a run ends trained
            origin = trained_origin(message.run, message.step, task_label(done.task, done.data))
            self.app.post_message(ModelReady(message.config, message.model, message.tokenizer,
                                             self.app.live.device, origin, self.session.example_text()))
            style = "bold red" if message.outcome == "error" else "bold green"
            self._say(f"run #{message.run} {message.outcome}: {message.message}; the live model is now its last "
                      "good weights", style)
        self.query_one("#tf-pause", Button).label = "Pause p"
        self.dirty = True
        self._after_run()
