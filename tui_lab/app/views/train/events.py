"""What the Train view does with its run's messages: ready (ask before a long run), steps, evals, the end.

A mixin of TrainView (which provides `store`, `session`, `stats`, `dirty`, `_hold`, `_step_ema`, `_say`,
`_after_run`, `_alignment_arrived` and `label_pause`). A message from a run other than the session's own is
dropped. The trainer is built held paused; its Ready releases it, or first asks when the estimate says the run
is long. When a run ends trained, its last good weights become the live model.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_lab.app.modals.confirm_run import ConfirmLongRun
from tui_lab.app.runs import label_runs
from tui_lab.app.views.train.loss_words import loss_note, sample_text
from tui_lab.app.views.train.messages import Estimate, RunSaid
from tui_lab.app.views.train.notes import confirm_text, vocab_note
from tui_lab.train.events import Alignment, Ended, Event, Failed, Ready


class TrainMessages:
    def _mine(self, run: int) -> bool:
        return self.session is not None and run == self.session.run

    def on_run_said(self, message: RunSaid) -> None:
        """What the session's run said, by its type (tui_lab.train.events)."""
        if not self._mine(message.run):
            return
        said = message.said
        if isinstance(said, Ready):
            self._run_ready(message.run, said)
        elif isinstance(said, Event):
            self._run_event(said)
        elif isinstance(said, Alignment):
            self._alignment_arrived(said.step, said.grid, said.rows, said.cols)
        elif isinstance(said, Failed):
            self._run_failed(message.run, said)
        elif isinstance(said, Ended):
            self._run_ended(message.run, said)

    def _run_ready(self, number: int, message: Ready) -> None:
        run = self.store.current
        run.model = message.model_config.to_dict()
        run.train = self.session.train_config.to_dict()
        label_runs(self.store.runs)  # now with every field of the real configs
        self.stats["lr_curve"] = message.lr_curve
        model = message.model_config
        self.query_one("#tr-loss-note", Static).update(
            loss_note(self.session.train_config.label_smoothing, model.dropout, model.vocab))
        start = "continuing the live weights" if message.continued else "fresh weights"
        tokenizer = self.session.tokenizer  # None for a ViT: images have no vocabulary to swap
        swap = vocab_note(self.session.model_config, message.model_config, tokenizer.kind) if tokenizer else None
        notes = "; ".join(([swap] if swap else []) + list(message.notes))
        self._say(f"run #{run.number}: {message.params:,} params, {start}" + (f"; {notes}" if notes else ""))
        if notes:
            self.notify(notes + " - the live model is rebuilt for it when the run ends", title="train")
        self.dirty = True
        estimate = Estimate(self.session.train_config.steps, message.tokens_per_step, message.flops_per_token,
                            message.peak_flops)
        question = confirm_text(run.number, estimate, self.session.device)
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
        self.label_pause()

    def _run_event(self, event: Event) -> None:
        run = self.store.current
        if event.kind == "step":
            run.train_loss.append((event.step, event.train_loss))
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
            self.stats["sample"] = sample_text(event.step, event.prompt, event.text, event.target)
        elif event.kind == "error":
            self._say(event.message, "bold red")
            self.notify(event.message, title="training stopped", severity="error", timeout=10)
        self.dirty = True

    def _run_failed(self, number: int, message: Failed) -> None:
        if self.session.ended:
            self.store.current.status = "failed"
        self._say(f"run #{number}: {message.error}", "bold red")
        self.notify(message.error, title="train", severity="error", timeout=10)
        if self.session.ended:
            self._after_run()  # a quit waiting for the run goes ahead

    def _run_ended(self, number: int, message: Ended) -> None:
        from tui_lab.app.live_model import ModelReady
        from tui_lab.app.origin import task_label, trained_origin

        run = self.store.current
        run.status = message.outcome
        if message.step == 0 and message.outcome == "stopped":  # cancelled: untrained weights replace nothing
            self._say(f"run #{number} cancelled before its first step; the live model is unchanged", "bold")
        else:
            done = self.session.train_config  # built before any step, so set whenever a run ends trained
            origin = trained_origin(number, message.step, task_label(done.task, done.data))
            session = self.session  # its last good weights, rebuilt from the final snapshot
            self.app.post_message(ModelReady(session.run_config, session.model, session.tokenizer,
                                             self.app.live.device, origin, session.example_text()))
            style = "bold red" if message.outcome == "error" else "bold green"
            # Short, so at 80x24 it fits the status's lines; "done at step 6, ..." names its outcome already
            said = message.message if message.message.startswith(message.outcome) else \
                f"{message.outcome}: {message.message}"
            self._say(f"run #{number} {said}; its last good weights are live", style)
        self.label_pause()
        self.dirty = True
        self._after_run()
