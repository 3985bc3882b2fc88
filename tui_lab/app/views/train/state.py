"""What the Train view knows of its runs: one plain object the view owns and its parts read.

The view changes it (a run starts, the trainer says something, the person holds or releases the run); the
monitor (`draw`) and the files (`files`) read it through these public fields and properties, never through
the view. It holds no widget: what it records is data, what is shown is the monitor's.
"""

from __future__ import annotations

from typing import Any

from tui_lab.app.runs import RunStore, label_runs
from tui_lab.app.views.train.loss_words import sample_text
from tui_lab.app.views.train.session import TrainSession
from tui_lab.train.events import Event, Ready


class RunState:
    def __init__(self) -> None:
        self.store = RunStore()  # every run of this app session, newest last: what the plots draw
        self.session: TrainSession | None = None  # the current (or last) run's trainer process
        self.stats: dict[str, Any] = {}  # the current run's last numbers: step, loss, lr, grads, sample...
        self.step_ema: float | None = None  # seconds per step, smoothed: the ETA
        # How a built run starts once released: "run" / "paused"; None: released (or no run).
        self.hold: str | None = None

    # -- reading -------------------------------------------------------------------------------------
    @property
    def training(self) -> bool:
        return self.session is not None and self.session.active

    @property
    def held_paused(self) -> bool:
        """Paused by the person (or to start paused), not held while the trainer is built."""
        if not self.training:
            return False
        return self.hold == "paused" if self.hold is not None else self.session.paused

    def mine(self, run: int) -> bool:
        """A message from run number `run` is the current session's (an older run may still be sending)."""
        return self.session is not None and run == self.session.run

    def phase(self) -> str | None:
        """What the run is doing, as the status line says it; None when no run trains."""
        if not self.training:
            return None
        if self.hold is not None:  # held until built (and asked): not a pause asked for
            return "building the trainer" if self.session.train_config is None else "starting"
        return "PAUSED" if self.session.paused else "running"

    def eta_s(self) -> float | None:
        """Seconds left at the smoothed step time, while a run trains."""
        if self.step_ema is None or not self.training:
            return None
        return (self.stats["total"] - self.stats["step"]) * self.step_ema

    # -- recording -----------------------------------------------------------------------------------
    def begin(self, session: TrainSession, steps: int, paused: bool) -> None:
        """A new run, held (paused, or to run) until its trainer is built and its estimate read."""
        self.session = session
        self.hold = "paused" if paused else "run"
        self.stats, self.step_ema = {"step": 0, "total": steps}, None

    def toggle_hold(self) -> str:
        """Before the run is released: flip how it will start; returns "run" or "paused"."""
        self.hold = "run" if self.hold == "paused" else "paused"
        return self.hold

    def release(self) -> str | None:
        """The run is no longer held; returns how it was to start ("run", "paused" or None)."""
        hold, self.hold = self.hold, None
        return hold

    def ready(self, message: Ready) -> None:
        """The trainer is built: the run's record gets its real configs (labels too) and the lr curve."""
        run = self.store.current
        run.model = message.model_config.to_dict()
        run.train = self.session.train_config.to_dict()
        label_runs(self.store.runs)  # now with every field of the real configs
        self.stats["lr_curve"] = message.lr_curve

    def record(self, event: Event) -> None:
        """A step, an eval or a sample, into the run's record and the last numbers (errors are the view's)."""
        run = self.store.current
        if event.kind == "step":
            run.train_loss.append((event.step, event.train_loss))
            run.lr.append((event.step, event.lr))
            run.tokens_per_s.append(event.tokens_per_s)
            if event.teacher_forcing is not None:
                run.teacher_forcing.append((event.step, event.teacher_forcing))
            self.step_ema = event.step_s if self.step_ema is None else 0.8 * self.step_ema + 0.2 * event.step_s
            self.stats.update(step=event.step, loss=event.train_loss, lr=event.lr, tps=event.tokens_per_s,
                              mfu=event.mfu, grads=event.layer_grad_norms, grad_norm=event.grad_norm,
                              aux=event.aux_loss, expert_load=event.expert_load)
        elif event.kind == "eval":
            run.val_loss.append((event.step, event.val_loss))
            self.stats.update(val=event.val_loss, exact=event.exact_match)
        elif event.kind == "sample":
            self.stats["sample"] = sample_text(event.step, event.prompt, event.text, event.target)
