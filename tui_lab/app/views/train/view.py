"""Train: pick data, start/pause/step/stop, and watch loss, learning rate, gradients and samples move.

The run trains the app's ONE live model: a fresh model of the live config (refit to the tokenizer's
vocab, which the status line says) or, with "continue live model", the live weights themselves; when
the run ends (done, stopped, or a non-finite loss) its last good weights become the live model. Events
arrive as messages; widgets are redrawn by a timer at most REDRAW_HZ times a second, so a fast run
cannot flood the UI, and plots get downsampled curves (runs.MAX_PLOT_POINTS per line). The run's messages
are handled in `events`, the drawing in `draw`, saving and loading in `files`.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import Button, ProgressBar, Static

from tui_lab.app.guard import guarded
from tui_lab.app.runs import RunStore
from tui_lab.app.views.train.align import TrainAlignment, compose_alignment
from tui_lab.app.views.train.draw import TrainDrawing
from tui_lab.app.views.train.events import TrainMessages
from tui_lab.app.views.train.files import TrainFiles
from tui_lab.app.views.train.form import TrainForm
from tui_lab.app.views.train.grad_norms import GradNorms
from tui_lab.app.views.train.session import LiveWeights, TrainSession
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.line_plot import LinePlot

REDRAW_HZ = 1  # each plotext redraw holds the UI thread (and the GIL) ~30 ms: 2 Hz cost training ~5%
PANELS = ("tr-lr-box", "tr-grads-box", "tr-sample-box", "tr-align-box", "tr-experts-box")
COMPACT_WIDTH, COMPACT_HEIGHT = 120, 40


class TrainView(TrainMessages, TrainFiles, TrainDrawing, TrainAlignment, Horizontal):
    BINDINGS = [
        # Two keys on the footer, the rest off it (the form's buttons name every key: "Step n", "Stop x"...): at 80
        # columns the footer still has room for f1..f7 and "q quit" (tests/test_app_80x24_cuts.py).
        Binding("g", "start", "start"),
        Binding("p", "pause", "pause"),
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
        self.store = RunStore()
        self.session: TrainSession | None = None
        self.overlay = False
        self.stats: dict[str, Any] = {}
        self.message = "building the trainer..." if getattr(self.app, "train_on_start", False) else \
            "press g to train the live model"
        self.message_style = "dim"
        self.dirty = False
        self.panel = 0
        self._step_ema: float | None = None
        self._redraws = 0
        self._hold: str | None = None  # "run" / "paused": how a built run starts once released; None: released

    def compose(self) -> ComposeResult:
        yield TrainForm(id="tr-form")
        with Vertical(id="tr-main"):
            yield Static("", id="tr-status")
            # total=1 until a run: a bar without a total animates at 15 frames/s, idle CPU for nothing
            yield ProgressBar(total=1, id="tr-progress", show_eta=False)  # the status line has the ETA
            yield LinePlot("loss", "step", "", id="tr-loss")
            yield Static("", id="tr-loss-note")  # what each loss includes (loss_words), once a run says
            with Horizontal(id="tr-lower"):
                with Vertical(id="tr-lr-box", classes="tr-panel"):
                    yield LinePlot("learning rate", "step", "", id="tr-lr")
                with VerticalScroll(id="tr-grads-box", classes="tr-panel"):
                    yield GradNorms(id="tr-grads")
                with VerticalScroll(id="tr-sample-box", classes="tr-panel"):
                    yield Static("samples appear as it trains", id="tr-sample")
                yield from compose_alignment()
                with Vertical(id="tr-experts-box", classes="tr-panel"):
                    yield Static("expert load (mixture-of-experts models)", id="tr-experts-title")
                    yield Heatmap(id="tr-experts")

    def on_mount(self) -> None:
        self.set_interval(1 / REDRAW_HZ, self._tick)
        self.query_one("#tr-align-box").display = False
        self.query_one("#tr-experts-box").display = False
        self._show_panel()
        self._suggest_folder(1)
        self.live_model_changed()  # a 2017 model built before this view mounted still picks its task
        self._status()
        if getattr(self.app, "train_on_start", False):
            self.app.show_view("train")
            self.call_after_refresh(self.action_start)

    # -- app hooks -----------------------------------------------------------------------------------
    def home(self) -> Button:
        """The Train controls: g, p, n, x, w, o, c, v, l act at once (i or Tab: into the form)."""
        return self.query_one("#tf-start", Button)

    def view_activated(self) -> None:
        self.call_after_refresh(self._redraw)  # what arrived while another view was in front (not drawn then)

    def live_model_changed(self) -> None:
        if not self.training and self.app.live.ready:  # ready: torch is loaded, the defaults may import it
            self.query_one(TrainForm).follow_model(self.app.live.config)
        if self.session is None and self.app.live.config.family == "encoder-decoder" and \
                self.query_one(TrainForm).task is None:
            self.query_one(TrainForm).choose_data("numbers-de")

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Train: start", "g: train the live model", self.action_start),
                ("Train: pause / resume", "p", self.action_pause),
                ("Train: one step (while paused)", "n", self.action_step),
                ("Train: stop", "x: the trained model becomes the live model", self.action_stop),
                ("Train: save checkpoint", "w: to the folder in the form", self.action_save),
                ("Train: load checkpoint", "o: from the folder in the form", self.action_load),
                ("Train: export loss history to CSV", "c", self.action_export_csv),
                ("Train: overlay runs", "v: every run of this session on one plot", self.action_overlay)]

    @property
    def training(self) -> bool:
        return self.session is not None and self.session.active

    def on_unmount(self) -> None:
        if self.session is not None:
            self.session.close()  # its trainer process must end with the app

    # -- actions -------------------------------------------------------------------------------------
    @guarded
    def action_start(self, paused: bool = False) -> None:
        if self.training and self.held_paused:  # g on a paused run goes on, as its Resume button says
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
        self._suggest_folder(run.number)
        # Held paused until the trainer is built and the estimate read (a long run asks first, a Ready from the run).
        self._hold = "paused" if paused else "run"
        self.session = TrainSession(run.number, live.config, (task, fields), live.device, paused=True,
                                    live=weights)
        self.stats, self._step_ema = {"step": 0, "total": fields["steps"]}, None
        self.query_one("#tr-progress", ProgressBar).update(total=fields["steps"], progress=0)
        self._alignment_started(task)
        self._show_experts(live.config.ffn == "moe")
        self._say(f"run #{run.number}: building the trainer...", "bold")
        self.session.start(self)

    def action_pause(self) -> None:
        if not self.training:
            return
        if self._hold is not None:  # not started yet (building, or asking): remember the choice
            self._hold = "run" if self._hold == "paused" else "paused"
            self._say("will start paused" if self._hold == "paused" else "will start running")
        elif self.session.paused:
            self.session.resume()
            self._say("resumed")
        else:
            self.session.pause()
            self._say("paused: n steps once, p or g resumes")
        self.label_pause()

    @property
    def held_paused(self) -> bool:
        """Paused by the person (or to start paused), not held while the trainer is built."""
        if not self.training:
            return False
        return self._hold == "paused" if self._hold is not None else self.session.paused

    def label_pause(self) -> None:
        self.query_one("#tf-pause", Button).label = "Resume p" if self.held_paused else "Pause p"

    def action_step(self) -> None:
        if not self.training or not self.session.paused:
            self.notify("step mode works while a run is paused (p)", severity="warning")
            return
        if not self.session.step_once():
            self.notify("the trainer is still being built", severity="warning")

    def action_stop(self) -> None:
        if self.training:
            self.session.stop()
            self._say("stopping after this step...", "bold")

    def action_overlay(self) -> None:
        self.overlay = not self.overlay
        self.dirty = True
        self._redraw()  # a key deserves an answer now, not at the next tick of the 1 Hz timer
        self.notify("overlay: every run of this session" if self.overlay else "overlay off: the current run")

    def action_next_panel(self) -> None:
        self.panel = (self.panel + 1) % len(PANELS)
        self._show_panel()
        if self.has_class("compact"):  # below 40 rows the panel is a scroll down: l brings it into view
            self.query_one("#tr-main").scroll_end(animate=False)

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        actions = {"tf-start": self.action_start, "tf-pause": self.action_pause, "tf-step": self.action_step,
                   "tf-stop": self.action_stop, "tf-save": self.action_save, "tf-load": self.action_load,
                   "tf-csv": self.action_export_csv, "tf-overlay": self.action_overlay}
        if event.button.id in actions:
            event.stop()
            actions[event.button.id]()

    # -- drawing -------------------------------------------------------------------------------------
    def _say(self, text: str, style: str = "") -> None:
        self.message, self.message_style = text, style
        self.dirty = True
        if self.is_mounted:
            self._status()  # the status line at once (cheap); plots wait for the timer

    # -- layout --------------------------------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        compact = event.size.width < COMPACT_WIDTH or event.size.height < COMPACT_HEIGHT
        self.set_class(compact, "compact")
        # One panel at a time on a small screen: its border names the key to the next (the footer has no room).
        for panel in PANELS:
            self.query_one(f"#{panel}").border_title = "l next panel" if compact else ""
        self.dirty = True  # panels hidden until now are drawn at the next tick

    def _show_experts(self, moe: bool) -> None:
        """A mixture-of-experts run shows its expert load (the panel a narrow terminal shows first)."""
        self.query_one("#tr-experts-box").display = moe
        if moe:
            self.panel = PANELS.index("tr-experts-box")
            self._show_panel()

    def _show_panel(self) -> None:
        for i, panel in enumerate(PANELS):
            self.query_one(f"#{panel}").set_class(i == self.panel, "shown")
        self.dirty = True  # a panel hidden until now is drawn at the next tick
