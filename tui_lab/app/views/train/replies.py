"""What the Train view does with each thing its run says (`RunSaid`, posted by the session's reader): a built run
is announced and let go, or held for a question before a long run; events are recorded for the monitor; a failure
and the end are said, and at the end the run's last good weights become the live model.

`RunReplies` is a plain object the view owns, as `TrainFiles` is: it reads and changes the view's `RunState`,
and acts through `host` (the view, as a Textual widget: its monitor, session, notifications and screens). A
message from a run other than the session's own is dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget

from tui_lab.app.modals.confirm_run import ConfirmLongRun
from tui_lab.app.views.train.loss_words import loss_note
from tui_lab.app.views.train.messages import Estimate, RunSaid
from tui_lab.app.views.train.notes import confirm_text, vocab_note
from tui_lab.app.views.train.state import RunState
from tui_lab.train.events import Alignment, Ended, Event, Failed, Note, Ready


class RunReplies:
    def __init__(self, host: Widget, state: RunState, say: Callable[..., None]) -> None:
        self.host, self.state, self.say = host, state, say

    def said(self, message: RunSaid) -> None:
        """What the session's run said, by its type (tui_lab.train.events)."""
        if not self.state.mine(message.run):
            return
        said = message.said
        if isinstance(said, Ready):
            self._ready(said)
        elif isinstance(said, Event):
            self.event(said)
        elif isinstance(said, Alignment):
            self.host.monitor.show_alignment(self.host.store.current, said.step, said.grid, said.rows, said.cols)
        elif isinstance(said, Note):
            self.host.notify(said.text, title="train", severity="warning", timeout=10)
        elif isinstance(said, Failed):
            self._failed(message.run, said)
        elif isinstance(said, Ended):
            self._ended(message.run, said)

    def _ready(self, message: Ready) -> None:
        """Built: say what it trains, then ask before a long run or let it go."""
        self.state.ready(message)
        session, run, model = self.host.session, self.host.store.current, message.model_config
        self.host.monitor.note_losses(loss_note(session.train_config.label_smoothing, model.dropout, model.vocab))
        start = "continuing the live weights" if message.continued else "fresh weights"
        tokenizer = session.tokenizer  # None for a ViT: images have no vocabulary to swap
        swap = vocab_note(session.model_config, message.model_config, tokenizer.kind) if tokenizer else None
        # the swap says what the setup's "vocab set to N from the tokenizer" says, with the parameter counts
        setup = [note for note in message.notes if not (swap and note.startswith("vocab set to"))]
        notes = "; ".join(([swap] if swap else []) + setup)
        self.say(f"run #{run.number}: {message.params:,} params, {start}" + (f"; {notes}" if notes else ""))
        if notes:
            self.host.notify(notes + " - the live model is rebuilt for it when the run ends", title="train")
        estimate = Estimate(session.train_config.steps, message.tokens_per_step, message.flops_per_token,
                            message.peak_flops)
        question = confirm_text(run.number, estimate, session.device)
        if question and self.state.hold == "run":
            self.host.app.push_screen(ConfirmLongRun(question), self._confirmed)
        else:
            self._release()

    def _confirmed(self, start: bool | None) -> None:
        if start:
            self._release()
        elif self.host.training:
            self.host.session.stop()
            self.say("cancelled before the first step: lower steps or batch for a shorter run", "bold")

    def _release(self) -> None:
        """Let the held run go, unless the person asked for it paused (or paused it meanwhile)."""
        if self.state.release() == "run" and self.host.training:
            self.host.session.resume()
        self.host.label_pause()

    def event(self, event: Event) -> None:
        self.state.record(event)
        if event.kind == "error":
            self.say(event.message, "bold red")
            self.host.notify(event.message, title="training stopped", severity="error", timeout=10)
        self.host.monitor.dirty = True

    def _failed(self, number: int, message: Failed) -> None:
        if self.host.session.ended:
            self.host.store.current.status = "failed"
        self.say(f"run #{number}: {message.error}", "bold red")
        self.host.notify(message.error, title="train", severity="error", timeout=10)
        self.host.label_pause()
        if self.host.session.ended:
            self.host.files.after_run()  # a quit waiting for the run goes ahead

    def _ended(self, number: int, message: Ended) -> None:
        """The run's last good weights become the live model, unless it was cancelled before its first step."""
        from tui_lab.app.live.model import ModelReady
        from tui_lab.app.origin import task_label, trained_origin

        self.host.store.current.status = message.outcome
        if message.step == 0 and message.outcome == "stopped":  # cancelled: untrained weights replace nothing
            self.say(f"run #{number} cancelled before its first step; the live model is unchanged", "bold")
        else:
            session = self.host.session  # its last good weights, rebuilt from the final snapshot
            done = session.train_config  # built before any step, so set whenever a run ends trained
            origin = trained_origin(number, message.step, task_label(done.task, done.data))
            self.host.app.post_message(ModelReady(session.run_config, session.model, session.tokenizer,
                                             self.host.app.live.device, origin, session.example_text()))
            style = "bold red" if message.outcome == "error" else "bold green"
            # Short, so at 80x24 it fits the status's lines; "done at step 6, ..." names its outcome already
            said = message.message if message.message.startswith(message.outcome) else \
                f"{message.outcome}: {message.message}"
            self.say(f"run #{number} {said}; its last good weights are live", style)
        self.host.label_pause()
        self.host.monitor.dirty = True
        self.host.files.after_run()
