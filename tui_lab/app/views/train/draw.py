"""The Train view's right side, `TrainMonitor` (`#tr-main`): the status line, progress, the loss plot and the
panels below it (learning rate, gradients, samples, alignment, expert load), redrawn by its own timer.

A widget of its own: it reads the run from the view's `RunState` (given when it is built) and owns what is on
screen: the message under the numbers (`say`), the overlay, which panel a small screen shows, and what each
widget shows now. The view tells it what happened (`dirty = True`, `run_started`, `say`...); it draws at most
REDRAW_HZ times a second, so a fast run cannot flood the UI. Plots get downsampled curves
(runs.MAX_PLOT_POINTS per line); the lr curve is fixed, so it is redrawn less.

Every millisecond the app spends while a run trains is taken from the trainer's threads on a 2-core machine
(benchmarks/interface/ui_latency.py measures the app's CPU per wall second), so a tick draws only what changed and is on
screen: nothing while another view is shown (drawn when the view comes back), no hidden panel, no widget
whose content is the same as last time.

While a run trains, the plots also give way (the status line never does): the loss plot redraws within
PLOT_SHARE of the UI thread's time (LinePlot.cost_s), no plot redraws while keys arrive (each key's echo
first), and text cursors do not blink. Measured with the UI thread at nice 5 (tui_lab/app/priority.py),
benchmarks/interface/ui_latency.py, 10 rounds each: in-app / headless 0.905 before the keys held the plots, 0.96 after;
the app's CPU while watching a run fell from 4.5-6% of a core to 1.7-4%.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, ProgressBar, Static

from tui_lab.app.runs import Run, downsample
from tui_lab.app.views.train.align import GRID_KEYS, AlignmentPanel
from tui_lab.app.views.train.experts import draw_expert_load
from tui_lab.app.views.train.grad_norms import GradNorms
from tui_lab.app.views.train.state import RunState
from tui_lab.app.widgets.heatmap import Heatmap, QuietHeatmap
from tui_lab.app.widgets.line_plot import Line, LinePlot

REDRAW_HZ = 1  # each plotext redraw holds the UI thread (and the GIL) ~30 ms: 2 Hz cost training ~5%
PANELS = ("tr-lr-box", "tr-grads-box", "tr-sample-box", "tr-align-box", "tr-experts-box")
PANEL_NAMES = dict(zip(PANELS, ("learning rate", "gradient norms", "samples", "alignment", "expert load"),
                       strict=True))
LR_REDRAW_EVERY = 4  # the lr curve is fixed; only its step marker moves
# While a run trains, the loss plot redraws at most at this share of the UI thread's time: each drawing took
# 20-30 ms on the 2-core machine (the plots were ~3% of a core, more than the rest of the view), and every
# millisecond the UI thread takes stalls both of the trainer's OpenMP threads (tui_lab/app/priority.py).
PLOT_SHARE = 0.015
TYPING_S = 0.6  # and not while a person types (keys this close together): each key's echo comes first


class TrainMonitor(Vertical):
    def __init__(self, state: RunState, message: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state = state  # read only: the view records the run
        self.message, self.message_style = message, "dim"  # the line under the numbers (`say`)
        self.dirty = False  # something changed that the next tick draws
        self.overlay = False  # the loss plot shows every run of this session
        self.panel = 0  # the lower panel a small screen shows (PANELS)
        self.compact = False  # a small screen: one lower panel at a time, in the loss plot's place
        self.lower_shown = False  # on a small screen: the panel shows (l), not the loss plot
        # Panels that apply to every run; alignment (a task's run) and expert load (a mixture of experts) join
        # when a run has them: on gpt2-toy two of five `l` presses showed nothing new
        self.applies = {panel: panel not in ("tr-align-box", "tr-experts-box") for panel in PANELS}
        self.redraws = 0  # the ticks that drew (tests wait for the next)
        self._drawn: dict = {}  # what each widget shows now, to skip the ones that would not change
        self._status_drawn: tuple | None = None
        self._status_lines = 0  # the lines the status last took: its height follows them
        self._blinking = True

    def compose(self) -> ComposeResult:
        yield Static("", id="tr-status")
        # total=1 until a run: a bar without a total animates at 15 frames/s, idle CPU for nothing
        yield ProgressBar(total=1, id="tr-progress", show_eta=False)  # the status line has the ETA
        # What each loss includes (loss_words), once a run says: above the plot, not under it, so a status that
        # takes more lines pushes the plot's foot past the fold, never the note (issue 36: at 80x24 and 100x30
        # its last line, 'val loss: neither', sat below the fold as a run started)
        yield Static("", id="tr-loss-note")
        yield LinePlot("loss", "step", "", id="tr-loss")
        with Horizontal(id="tr-lower"):
            with Vertical(id="tr-lr-box", classes="tr-panel"):
                yield LinePlot("learning rate", "step", "", id="tr-lr")
            with VerticalScroll(id="tr-grads-box", classes="tr-panel"):
                yield GradNorms(id="tr-grads")
            with VerticalScroll(id="tr-sample-box", classes="tr-panel"):
                yield Static("samples appear as it trains", id="tr-sample")
            yield AlignmentPanel(id="tr-align-box", classes="tr-panel")
            with Vertical(id="tr-experts-box", classes="tr-panel"):
                yield Static("expert load (mixture-of-experts models)", id="tr-experts-title")
                yield QuietHeatmap(id="tr-experts", keys_note=GRID_KEYS)  # as the alignment's

    def on_mount(self) -> None:
        self.set_interval(1 / REDRAW_HZ, self._tick)
        self.query_one("#tr-experts-box").display = False
        self._show_panel()
        self._status()

    # -- what the view tells it ------------------------------------------------------------------------
    def say(self, text: str, style: str = "") -> None:
        """The line under the numbers, drawn at once (cheap); plots wait for the timer."""
        self.message, self.message_style = text, style
        self.dirty = True
        if self.is_mounted:
            self._status()

    def run_started(self, steps: int, task: str | None, moe: bool) -> None:
        self.query_one("#tr-progress", ProgressBar).update(total=steps, progress=0)
        self.query_one(AlignmentPanel).start(task)
        self.applies["tr-align-box"] = task is not None
        self.applies["tr-experts-box"] = moe
        self._show_experts(moe)

    def show_alignment(self, run: Run, step: int, grid: list[list[float]], rows: list[str], cols: list[str]) -> None:
        self.query_one(AlignmentPanel).show(run, step, grid, rows, cols)

    def note_losses(self, note: str) -> None:
        """What each loss includes, above the loss plot (loss_words.loss_note)."""
        self.query_one("#tr-loss-note", Static).update(note)

    def toggle_overlay(self) -> bool:
        """Every run on the loss plot, or the current one; drawn now (a key deserves an answer, not a tick)."""
        self.overlay = not self.overlay
        self.dirty = True
        self.redraw()
        return self.overlay

    def set_compact(self, compact: bool) -> None:
        """One panel at a time on a small screen, shown by `l` in the loss plot's place, its border naming it
        and the key (the footer has no room). It used to be a scroll below the plot: `l` scrolled the run's
        status, bar and plot off screen and no key brought them back."""
        self.compact = compact
        self._show_panel()

    def next_panel(self) -> None:
        """The next panel that applies; on a small screen, after the last one, the loss plot again."""
        order = [panel for panel in PANELS if self.applies[panel]]
        at = PANELS[self.panel]
        if self.compact and not self.lower_shown:  # the panel last shown (expert load for an MoE run)
            self.lower_shown, at = True, at if at in order else order[0]
        elif self.compact and at == order[-1]:
            self.lower_shown, at = False, order[0]  # the plot; the next `l` starts the panels again
        else:
            at = order[(order.index(at) + 1) % len(order)] if at in order else order[0]
        self.panel = PANELS.index(at)
        self._show_panel()

    def _show_experts(self, moe: bool) -> None:
        """A mixture-of-experts run shows its expert load (the panel a narrow terminal shows first)."""
        self.query_one("#tr-experts-box").display = moe
        if moe:
            self.panel = PANELS.index("tr-experts-box")
            self._show_panel()

    def _show_panel(self) -> None:
        for i, panel in enumerate(PANELS):
            box = self.query_one(f"#{panel}")
            box.set_class(i == self.panel, "shown")
            last = panel == [p for p in PANELS if self.applies[p]][-1]
            box.border_title = f"{PANEL_NAMES[panel]} · l {'loss plot' if last else 'next panel'}" \
                if self.compact else ""
        self.set_class(self.compact and self.lower_shown, "-panel")
        self.dirty = True  # a panel hidden until now is drawn at the next tick

    # -- drawing -------------------------------------------------------------------------------------
    def _tick(self) -> None:
        self._blink(not self.state.training)
        self.redraw(paced=True)

    def _typing(self) -> bool:
        return time.monotonic() - self.app.last_key_at < TYPING_S

    def _blink(self, on: bool) -> None:
        """Text cursors stay lit, without blinking, while a run trains: each blink is a frame (~1% of a core).
        Fields mounted later (a view still mounting, a dialog) read the app's `fields_blink` (FieldInput)."""
        if on != self._blinking:
            self._blinking = self.app.fields_blink = on
            for field in self.screen.query(Input):
                field.cursor_blink = on

    def redraw(self, paced: bool = False) -> None:
        """Draw what changed; `paced` (the timer's ticks) lets the loss plot wait for its share of time."""
        if not self.dirty or not self.is_on_screen:
            return  # another view is in front: the tick after it comes back draws (view_activated)
        self.dirty = False
        drawn, s, training = self._drawn, self.state.stats, self.state.training
        self._status()
        pacing = paced and training
        held = pacing and self._typing()  # plots wait while a person types
        loss = self._loss_key()
        if drawn.get("loss") != loss:
            if not held and (not pacing or self.query_one("#tr-loss", LinePlot).due(PLOT_SHARE)):
                drawn["loss"] = loss
                self.draw_loss()
            else:
                self.dirty = True  # new points wait for a later tick
        self.redraws += 1
        if not held and (self.redraws % LR_REDRAW_EVERY == 1 or not training) and \
                drawn.get("lr") != (s.get("step"), id(s.get("lr_curve"))):
            drawn["lr"] = (s.get("step"), id(s.get("lr_curve")))
            self._draw_lr()
        if "grads" in s and self._shows("#tr-grads-box") and drawn.get("grads") is not s["grads"]:
            drawn["grads"] = s["grads"]
            self.query_one("#tr-grads", GradNorms).show(s["grads"], s.get("grad_norm"))
        session = self.state.session
        if s.get("expert_load") and session is not None and self._shows("#tr-experts-box") and \
                drawn.get("experts") is not s["expert_load"]:
            drawn["experts"] = s["expert_load"]
            draw_expert_load(self.query_one("#tr-experts", Heatmap), self.query_one("#tr-experts-title", Static),
                             session.model_config, s)
        if "sample" in s and self._shows("#tr-sample-box") and drawn.get("sample") != s["sample"]:
            drawn["sample"] = s["sample"]
            self.query_one("#tr-sample", Static).update(s["sample"])
        progress = self.query_one("#tr-progress", ProgressBar)
        if progress.progress != s.get("step", 0):
            progress.update(progress=s.get("step", 0))

    def _shows(self, panel: str) -> bool:
        """The panel is laid out (a narrow terminal shows one at a time; experts only for MoE runs)."""
        return self.query_one(panel).display and (not self.compact or self.query_one(panel).has_class("shown"))

    def _loss_key(self) -> tuple:
        """Changes whenever the loss plot would: new points, another run, the overlay switched."""
        runs = self.state.store.runs if self.overlay else self.state.store.runs[-1:]
        return (self.overlay, tuple((r.number, r.label, len(r.train_loss), len(r.val_loss), len(r.teacher_forcing))
                                    for r in runs))

    def draw_loss(self) -> None:
        runs = self.state.store.runs if self.overlay else self.state.store.runs[-1:]
        lines = []
        for run in runs:
            name = run.label if self.overlay else "train"
            train, val = downsample(run.train_loss), downsample(run.val_loss)
            if val:  # drawn first, a thin line: the train curve passes over it, never hidden under val dots
                lines.append(Line(f"{name} val" if self.overlay else "val (held out)", [s for s, _ in val],
                                  [v for _, v in val], colour=None if self.overlay else "orange"))
            lines.append(Line(name, [s for s, _ in train], [v for _, v in train],
                              colour=None if self.overlay else "cyan"))
            lines += _forcing_line(run, name)
        title = "loss: every run (v)" if self.overlay else "loss (v: overlay runs)"
        self.query_one("#tr-loss", LinePlot).set_lines(lines, title=title)

    def _draw_lr(self) -> None:
        curve = self.state.stats.get("lr_curve")
        if curve:
            line = Line("", [s for s, _ in curve], [v for _, v in curve], colour="orange")
            self.query_one("#tr-lr", LinePlot).set_lines([line], vline=self.state.stats.get("step", 0))

    def _status(self) -> None:
        s = self.state.stats
        parts = []
        if "step" in s:
            parts.append(f"step {s['step']}/{s['total']}")
        for key, name, fmt in (("loss", "loss", "{:.4f}"), ("aux", "aux", "{:.4f}"), ("val", "val", "{:.4f}"),
                               ("exact", "exact", "{:.0%}"), ("lr", "lr", "{:.2e}"), ("tps", "tokens/s", "{:,.0f}"),
                               ("mfu", "MFU", "{:.1%}")):
            if s.get(key) is not None:
                parts.append(f"{name} {fmt.format(s[key])}")
        left = self.state.eta_s()
        if left is not None:
            parts.append(f"ETA {int(left // 60)}:{int(left % 60):02d}")
        phase = self.state.phase()
        if phase is not None:
            parts.append(phase)
        key = (tuple(parts), self.message, self.message_style)
        if key == self._status_drawn:
            return  # the same line again (a tick with nothing new): no repaint
        self._status_drawn = key
        text = Text("  ".join(parts) + "\n", style="bold")
        text.append(self.message, style=self.message_style)
        status = self.query_one("#tr-status", Static)
        # Its height fits its lines (issue 36 item 19: at 80x24 a fixed 4 cut the vocabulary note after "(256):"
        # with no mark); the screen is laid out again only when that count changes, not on every tick.
        lines = len(text.wrap(self.app.console, max(1, status.content_region.width)))
        status.update(text, layout=lines != self._status_lines)
        self._status_lines = lines


def _forcing_line(run, name: str) -> list[Line]:
    """Scheduled sampling's p_i on the loss plot (same axis: a probability in [0, 1] beside the losses), only
    when the run decays it: at a constant 1.0 it says nothing teacher forcing does not."""
    points = downsample(run.teacher_forcing)
    if not points or all(p == 1.0 for _, p in points):
        return []
    label = f"{name} p(gold)" if name != "train" else "p(gold input)"
    colour = "green" if name == "train" else None  # overlaid runs keep one colour per line
    return [Line(label, [s for s, _ in points], [p for _, p in points], colour=colour, marker="dot")]
