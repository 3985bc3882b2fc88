"""Train: pick data, start/pause/step/stop, and watch loss, learning rate, gradients and samples move.

The run trains the app's ONE live model: a fresh model of the live config (refit to the tokenizer's
vocab, which the status line says) or, with "continue live model", the live weights themselves; when
the run ends (done, stopped, or a non-finite loss) its last good weights become the live model.

The view is composed, not mixed: it owns the run (`RunState`: the session, the runs' records, the last
numbers, whether the run is held) and its keys, and handles what the run says (`RunSaid`, posted by the
session's reader). Its parts:
- `TrainForm` (form.py, `#tr-form`): the fields and buttons; its buttons' presses come up as messages.
- `TrainMonitor` (draw.py, `#tr-main`): everything on the right, redrawn by its own timer at most REDRAW_HZ
  times a second, so a fast run cannot flood the UI; it reads the `RunState` and is told what changed.
- `TrainFiles` (files.py): save, load, CSV export and quitting mid-run, a plain object the keys call; its
  savers post `CheckpointSaved` back here.
- `RunReplies` (replies.py): what the view does with each thing its run says (`RunSaid`), a plain object too.
The trainer says Ready first (built, held paused): the view then asks before a long run, or releases it.
A message from a run other than the session's own is dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import Button, Input

from tui_lab.app.background_job import disable
from tui_lab.app.guard import guarded
from tui_lab.app.runs import RunStore
from tui_lab.app.view_contract import LabView, TrainingChanged
from tui_lab.app.views.train.draw import TrainMonitor
from tui_lab.app.views.train.files import CheckpointSaved, TrainFiles
from tui_lab.app.views.train.form import TrainForm
from tui_lab.app.views.train.messages import RunSaid
from tui_lab.app.views.train.replies import RunReplies
from tui_lab.app.views.train.session import LiveWeights, TrainSession
from tui_lab.app.views.train.state import RunState

COMPACT_WIDTH, COMPACT_HEIGHT = 120, 40


class TrainView(LabView):
    BINDINGS = [
        # Two keys on the footer, the rest off it (the form's buttons name every key: "Step n", "Stop x"...): at 80
        # columns the footer still has room for f1..f7 and "q quit" (tests/app/shell/test_app_80x24_cuts.py).
        Binding("g", "start", "start"),
        Binding("p", "pause", "pause"),
        Binding("p", "resume", "resume"),  # in pause's place on the footer while a run is paused, as its button says
        Binding("n", "step", "step", show=False),
        Binding("x", "stop", "stop", show=False),
        Binding("w", "save", "save", show=False),
        Binding("o", "load", "load", show=False),
        Binding("c", "export_csv", "CSV", show=False),
        Binding("v", "overlay", "overlay runs", show=False),
        Binding("l", "next_panel", "panel", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state = RunState()
        self.files = TrainFiles(self, self.state, self._say)
        self.replies = RunReplies(self, self.state, self._say)
        self._told_training = False  # what the other views last heard (TrainingChanged)
        first = "building the trainer..." if self.lab.train_on_start else \
            "press g to train the live model"
        # Kept, not queried: every step event marks it changed, and a query walks the form's widgets first.
        self.monitor = TrainMonitor(self.state, first, id="tr-main")

    def compose(self) -> ComposeResult:
        yield TrainForm(id="tr-form")
        yield self.monitor

    def on_mount(self) -> None:
        self.files.suggest_folder(1)
        self.label_pause()  # Pause and Stop off until a run goes
        self.live_model_changed()  # a 2017 model built before this view mounted still picks its task
        if self.lab.train_on_start:
            self.app.show_view("train")
            self.call_after_refresh(self.action_start)

    # -- what tests and the app read -----------------------------------------------------------------
    @property
    def session(self) -> TrainSession | None:
        return self.state.session

    @property
    def store(self) -> RunStore:
        return self.state.store

    @property
    def stats(self) -> dict[str, Any]:
        return self.state.stats

    @property
    def training(self) -> bool:
        return self.state.training

    @property
    def message(self) -> str:
        """The line under the numbers, as said last."""
        return self.monitor.message

    @property
    def dirty(self) -> bool:
        """Something changed that the monitor's next tick draws."""
        return self.monitor.dirty

    @property
    def last_export(self) -> Path | None:
        return self.files.last_export

    # -- app hooks -----------------------------------------------------------------------------------
    def home(self) -> Button:
        """The Train controls: g, p, n, x, w, o, c, v, l act at once (i or Tab: into the form)."""
        return self.query_one("#tf-start", Button)

    def view_activated(self) -> None:
        self.call_after_refresh(self.monitor.redraw)  # what arrived while another view was in front (not drawn then)

    def live_model_changed(self) -> None:
        form = self.query_one(TrainForm)
        if not self.training and self.app.live.ready:  # ready: torch is loaded, the defaults may import it
            form.follow_model(self.app.live.config)
        if self.session is None and self.app.live.config.family == "encoder-decoder" and form.task is None:
            form.choose_data("numbers-de")

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Train: start", "g: train the live model", self.action_start),
                ("Train: pause / resume", "p", self.action_pause),
                ("Train: one step (while paused)", "n", self.action_step),
                ("Train: stop", "x: the trained model becomes the live model", self.action_stop),
                ("Train: save checkpoint", "w: to the folder in the form", self.action_save),
                ("Train: load checkpoint", "o: from the folder in the form", self.action_load),
                ("Train: export loss history to CSV", "c", self.action_export_csv),
                ("Train: overlay runs", "v: every run of this session on one plot", self.action_overlay)]

    def confirm_quit(self) -> bool:
        """Called by the app's quit: True when a modal took over (training is running)."""
        return self.files.confirm_quit()

    def on_unmount(self) -> None:
        if self.session is not None:
            self.session.close()  # its trainer process must end with the app

    # -- actions -------------------------------------------------------------------------------------
    @guarded
    def action_start(self, paused: bool = False) -> None:
        if self.training and self.state.held_paused:  # g on a paused run goes on, as its Resume button says
            self.action_pause()
            return
        if self.training:
            self.notify("a run is already going: stop it first (x)", severity="warning")
            return
        form = self.query_one(TrainForm)
        task, fields = form.fields()
        live = self.app.live
        weights = LiveWeights(live.config, live.model, live.tokenizer) if form.continue_live and live.ready else None
        if self.session is not None:
            self.session.close()  # the last run's process stayed for saving (w); a new run replaces it
        run = self.store.start(live.config.to_dict(), {"task": task, **fields})
        self.files.suggest_folder(run.number)
        # Held paused until the trainer is built and the estimate read (a long run asks first, a Ready from the run).
        session = TrainSession(run.number, live.config, (task, fields), live.device, paused=True, live=weights)
        self.state.begin(session, fields["steps"], paused)
        self.monitor.run_started(fields["steps"], task, live.config.ffn == "moe")
        self._say(f"run #{run.number}: building the trainer...", "bold")
        session.start(self)
        self.label_pause()
        self._tell_training()

    def action_pause(self) -> None:
        if not self.training:
            return
        if self.state.hold is not None:  # not started yet (building, or asking): remember the choice
            hold = self.state.toggle_hold()
            self._say("will start paused" if hold == "paused" else "will start running")
        elif self.session.paused:
            self.session.resume()
            self._say("resumed")
        else:
            self.session.pause()
            self._say("paused: n steps once, p or g resumes")
        self.label_pause()

    def action_resume(self) -> None:
        self.action_pause()

    def label_pause(self) -> None:
        """The Pause button's word, and the keys that act on a run only while one goes (check_action)."""
        self.query_one("#tf-pause", Button).label = "Resume p" if self.state.held_paused else "Pause p"
        disable(self.query_one("#tf-pause", Button), not self.training, self.home())
        disable(self.query_one("#tf-stop", Button), not self.can_stop, self.home())
        disable(self.query_one("#tf-step", Button), not self.can_step, self.home())
        self.refresh_bindings()

    @property
    def can_step(self) -> bool:
        """n steps once: a built run, paused (not held while it is built)."""
        session = self.session
        return self.training and self.state.hold is None and session.ready and session.paused

    @property
    def can_stop(self) -> bool:
        """x stops once: a run goes and no stop was asked for yet."""
        return self.training and not self.session.stopping

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Dimmed while they do not apply (issue 36): p and x with no run, x once a stop was asked for, g while one
        goes unpaused, n unless a built run is paused (the crawler's long tier met n, and a second x, named by
        their buttons and changing nothing)."""
        if action in ("pause", "resume"):  # one of the two on the footer: the word the Pause button shows
            shown = (action == "resume") == self.state.held_paused
            return (True if self.training else None) if shown else False
        if action == "stop":
            return True if self.can_stop else None
        if action == "start":
            return None if self.training and not self.state.held_paused else True
        if action == "step":
            return True if self.can_step else None
        return True

    def action_step(self) -> None:  # the palette's "one step" comes here even while n is dimmed: it says why
        if not self.training or not self.session.paused:
            self.notify("step mode works while a run is paused (p)", severity="warning")
            return
        if not self.session.step_once():
            self.notify("the trainer is still being built", severity="warning")

    def action_stop(self) -> None:
        if self.can_stop:
            self.session.stop()
            self._say("stopping after this step...", "bold")
            self.label_pause()
        elif self.training:  # the palette's stop comes here while x is dimmed
            self.notify("already stopping: the run ends after the step it is on", severity="warning")

    @guarded
    def action_save(self) -> None:
        self.files.save()

    @guarded
    def action_load(self) -> None:
        self.files.load()

    @guarded
    def action_export_csv(self) -> None:
        self.files.export_csv()

    def action_overlay(self) -> None:
        overlay = self.monitor.toggle_overlay()
        self.notify("overlay: every run of this session" if overlay else "overlay off: the current run")

    def action_next_panel(self) -> None:
        self.monitor.next_panel()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter in a field of the run's form starts the run, as g does (it did nothing, and a typing field's footer
        offers no g). The checkpoint folder is Save's and Load's: Enter there picks neither."""
        event.stop()
        if event.input.id != "tf-folder":
            self.action_start()

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        actions = {"tf-start": self.action_start, "tf-pause": self.action_pause, "tf-step": self.action_step,
                   "tf-stop": self.action_stop, "tf-save": self.action_save, "tf-load": self.action_load,
                   "tf-csv": self.action_export_csv, "tf-overlay": self.action_overlay}
        if event.button.id in actions:
            event.stop()
            actions[event.button.id]()

    def on_checkpoint_saved(self, message: CheckpointSaved) -> None:
        self.files.saved(message)

    def _say(self, text: str, style: str = "") -> None:
        self.monitor.say(text, style)

    # -- what the run says ---------------------------------------------------------------------------
    def on_run_said(self, message: RunSaid) -> None:
        self.replies.said(message)
        self._tell_training()

    def _tell_training(self) -> None:
        """The other views hear that a run started or ended (the App passes it on): the Speed view says a
        measurement shares the CPU with it."""
        if self.training != self._told_training:
            self._told_training = self.training
            self.post_message(TrainingChanged(self.training))

    # -- layout --------------------------------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        compact = event.size.width < COMPACT_WIDTH or event.size.height < COMPACT_HEIGHT
        self.set_class(compact, "compact")  # the stylesheet narrows the form and shows one lower panel
        self.monitor.set_compact(compact)
