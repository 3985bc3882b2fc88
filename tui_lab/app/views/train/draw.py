"""The Train view's drawing: the status line, and the loss and learning-rate plots on the redraw timer.

A mixin of TrainView (which provides `store`, `stats`, `overlay`, `dirty`, `message`, `training`, `session`).
Plots get downsampled curves (runs.MAX_PLOT_POINTS per line); the lr curve is fixed, so it is redrawn less.

Every millisecond the app spends while a run trains is taken from the trainer's threads on a 2-core machine
(benchmarks/ui_latency.py measures the app's CPU per wall second), so a tick draws only what changed and is on
screen: nothing while another view is shown (drawn when the view comes back), no hidden panel, no widget
whose content is the same as last time.

While a run trains, the plots also give way (the status line never does): the loss plot redraws within
PLOT_SHARE of the UI thread's time (LinePlot.cost_s), no plot redraws while keys arrive (each key's echo
first), and text cursors do not blink. Measured with the UI thread at nice 5 (tui_lab/app/priority.py),
benchmarks/ui_latency.py, 10 rounds each: in-app / headless 0.905 before the keys held the plots, 0.96 after;
the app's CPU while watching a run fell from 4.5-6% of a core to 1.7-4%.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Input, ProgressBar, Static

from tui_lab.app.runs import downsample
from tui_lab.app.views.train.experts import draw_expert_load
from tui_lab.app.views.train.grad_norms import GradNorms
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.line_plot import Line, LinePlot

LR_REDRAW_EVERY = 4  # the lr curve is fixed; only its step marker moves
# While a run trains, the loss plot redraws at most at this share of the UI thread's time: each drawing took
# 20-30 ms on the 2-core machine (the plots were ~3% of a core, more than the rest of the view), and every
# millisecond the UI thread takes stalls both of the trainer's OpenMP threads (tui_lab/app/priority.py).
PLOT_SHARE = 0.015
TYPING_S = 0.6  # and not while a person types (keys this close together): each key's echo comes first


class TrainDrawing:
    _redraws = 0
    _drawn: dict | None = None  # what each widget shows now, to skip the ones that would not change
    _blinking = True

    def _tick(self) -> None:
        self._blink(not self.training)
        self._redraw(paced=True)

    def _typing(self) -> bool:
        return time.monotonic() - self.app.last_key_at < TYPING_S

    def _blink(self, on: bool) -> None:
        """Text cursors stay lit, without blinking, while a run trains: each blink is a frame (~1% of a core)."""
        if on != self._blinking:
            self._blinking = on
            for field in self.screen.query(Input):
                field.cursor_blink = on

    def _redraw(self, paced: bool = False) -> None:
        """Draw what changed; `paced` (the timer's ticks) lets the loss plot wait for its share of time."""
        if not self.dirty or not self.is_on_screen:
            return  # another view is in front: the tick after it comes back draws (view_activated)
        self.dirty = False
        drawn = self._drawn = self._drawn if self._drawn is not None else {}
        s = self.stats
        self._status()
        pacing = paced and self.training
        held = pacing and self._typing()  # plots wait while a person types
        loss = self._loss_key()
        if drawn.get("loss") != loss:
            if not held and (not pacing or self.query_one("#tr-loss", LinePlot).due(PLOT_SHARE)):
                drawn["loss"] = loss
                self._draw_loss()
            else:
                self.dirty = True  # new points wait for a later tick
        self._redraws += 1
        if not held and (self._redraws % LR_REDRAW_EVERY == 1 or not self.training) and \
                drawn.get("lr") != (s.get("step"), id(s.get("lr_curve"))):
            drawn["lr"] = (s.get("step"), id(s.get("lr_curve")))
            self._draw_lr()
        if "grads" in s and self._shows("#tr-grads-box") and drawn.get("grads") is not s["grads"]:
            drawn["grads"] = s["grads"]
            self.query_one("#tr-grads", GradNorms).show(s["grads"], s.get("grad_norm"))
        if s.get("expert_load") and self.session is not None and self._shows("#tr-experts-box") and \
                drawn.get("experts") is not s["expert_load"]:
            drawn["experts"] = s["expert_load"]
            draw_expert_load(self.query_one("#tr-experts", Heatmap), self.query_one("#tr-experts-title", Static),
                             self.session.model_config, s)
        if "sample" in s and self._shows("#tr-sample-box") and drawn.get("sample") != s["sample"]:
            drawn["sample"] = s["sample"]
            self.query_one("#tr-sample", Static).update(s["sample"])
        progress = self.query_one("#tr-progress", ProgressBar)
        if progress.progress != s.get("step", 0):
            progress.update(progress=s.get("step", 0))

    def _shows(self, panel: str) -> bool:
        """The panel is laid out (a narrow terminal shows one at a time; experts only for MoE runs)."""
        return self.query_one(panel).display and (not self.has_class("compact") or
                                                  self.query_one(panel).has_class("shown"))

    def _loss_key(self) -> tuple:
        """Changes whenever the loss plot would: new points, another run, the overlay switched."""
        runs = self.store.runs if self.overlay else self.store.runs[-1:]
        return (self.overlay, tuple((r.number, r.label, len(r.train_loss), len(r.val_loss), len(r.teacher_forcing))
                                    for r in runs))

    def _draw_loss(self) -> None:
        runs = self.store.runs if self.overlay else self.store.runs[-1:]
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
        curve = self.stats.get("lr_curve")
        if curve:
            line = Line("", [s for s, _ in curve], [v for _, v in curve], colour="orange")
            self.query_one("#tr-lr", LinePlot).set_lines([line], vline=self.stats.get("step", 0))

    def _status(self) -> None:
        s = self.stats
        parts = []
        if "step" in s:
            parts.append(f"step {s['step']}/{s['total']}")
        for key, name, fmt in (("loss", "loss", "{:.4f}"), ("aux", "aux", "{:.4f}"), ("val", "val", "{:.4f}"),
                               ("exact", "exact", "{:.0%}"), ("lr", "lr", "{:.2e}"), ("tps", "tokens/s", "{:,.0f}"),
                               ("mfu", "MFU", "{:.1%}")):
            if s.get(key) is not None:
                parts.append(f"{name} {fmt.format(s[key])}")
        if self._step_ema is not None and self.training:
            left = (s["total"] - s["step"]) * self._step_ema
            parts.append(f"ETA {int(left // 60)}:{int(left % 60):02d}")
        if self.training and self._hold is not None:  # held until built (and asked): not a pause asked for
            parts.append("building the trainer" if self.session.train_config is None else "starting")
        elif self.training:
            parts.append("PAUSED" if self.session.paused else "running")
        key = (tuple(parts), self.message, self.message_style)
        if key == getattr(self, "_status_drawn", None):
            return  # the same line again (a tick with nothing new): no repaint
        self._status_drawn = key
        text = Text("  ".join(parts) + "\n", style="bold")
        text.append(self.message, style=self.message_style)
        self.query_one("#tr-status", Static).update(text, layout=False)  # fixed height (tcss): no relayout


def _forcing_line(run, name: str) -> list[Line]:
    """Scheduled sampling's p_i on the loss plot (same axis: a probability in [0, 1] beside the losses), only
    when the run decays it: at a constant 1.0 it says nothing teacher forcing does not."""
    points = downsample(run.teacher_forcing)
    if not points or all(p == 1.0 for _, p in points):
        return []
    label = f"{name} p(gold)" if name != "train" else "p(gold input)"
    colour = "green" if name == "train" else None  # overlaid runs keep one colour per line
    return [Line(label, [s for s, _ in points], [p for _, p in points], colour=colour, marker="dot")]
