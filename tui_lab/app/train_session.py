"""One training run inside the app: the engine's Trainer in a thread worker, relayed as messages.

The worker builds the Trainer (torch is imported there, never on the UI's import path), then runs it.
Everything crosses to the UI thread as `post_message` (never `call_from_thread`, which blocks the
worker until the UI runs it). Pause/resume/stop act on a RunControl created on the UI thread before the
Trainer exists, so a run can start paused (tests: Pilot waits for idle, which a busy worker never gives).

Threads: on 2 cores, torch's default of 2 OpenMP threads beside a busy UI thread collapsed throughput
(spinning workers); the run's thread count and OpenMP's spin come from `tui_lab.app.threads`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.worker import Worker, get_current_worker

from tui_lab.app.threads import train_threads
from tui_lab.config import ModelConfig
from tui_lab.errors import one_line
from tui_lab.run_control import RunControl

if TYPE_CHECKING:
    from tui_lab.train.config import TrainConfig

ALIGN_EVERY_S = 1.0  # the numbers-de alignment grid is recomputed at most this often
LR_CURVE_POINTS = 200
# The share of the measured matmul peak a training step reaches, for the estimate shown before a run starts:
# in-app runs measured 36-51% MFU on CPU (issue 9).
ASSUMED_MFU = 0.4



# -- messages (posted from the training thread) ------------------------------------------------------
class TrainReady(Message):
    """The Trainer is built: the config it really trains, the notes (vocab refit...), the lr curve."""

    def __init__(self, run: int, model_config: ModelConfig, notes: list[str], lr_curve: list[tuple[int, float]],
                 params: int, continued: bool, estimate: Estimate | None = None) -> None:
        super().__init__()
        self.run, self.model_config, self.notes, self.lr_curve = run, model_config, notes, lr_curve
        self.params, self.continued, self.estimate = params, continued, estimate


@dataclass(frozen=True)
class Estimate:
    """How long the run should take: its FLOPs over an assumed share of the device's measured matmul peak."""

    steps: int
    tokens_per_step: int
    flops_per_token: int  # training (forward + backward), from tui_lab.analysis
    peak_flops: float

    @property
    def seconds(self) -> float:
        return self.steps * self.tokens_per_step * self.flops_per_token / (self.peak_flops * ASSUMED_MFU)

    def describe(self) -> str:
        return (f"{self.steps:,} steps x {self.tokens_per_step:,} tokens x {self.flops_per_token / 1e6:,.1f} MFLOP"
                f"/token at {ASSUMED_MFU:.0%} of the measured {self.peak_flops / 1e9:,.0f} GFLOP/s peak")


def tokens_per_step(trainer: Any) -> int:
    """Tokens one step trains on: batch x window for text; batch x the mean (source + target + 1) for a task."""
    c = trainer.train_config
    if not trainer.is_seq2seq:
        return c.batch_size * trainer.source.context()
    pairs = trainer.source.task.train
    mean = sum(len(src) + len(tgt) + 1 for src, tgt in pairs) / max(1, len(pairs))
    return max(1, round(c.batch_size * mean))


class TrainEvent(Message):
    """One engine event (tui_lab.train.events)."""

    def __init__(self, run: int, event: Any) -> None:
        super().__init__()
        self.run, self.event = run, event


class Alignment(Message):
    """Cross-attention (mean of heads, last decoder layer) of the fixed held-out example."""

    def __init__(self, run: int, step: int, grid: list[list[float]], rows: list[str], cols: list[str]) -> None:
        super().__init__()
        self.run, self.step, self.grid, self.rows, self.cols = run, step, grid, rows, cols


class TrainEnded(Message):
    """The run is over (done, stopped, or an error); the model holds the last good weights."""

    def __init__(self, run: int, model: Any, tokenizer: Any, config: ModelConfig | None, step: int,
                 outcome: str, message: str) -> None:
        super().__init__()
        self.run, self.model, self.tokenizer, self.config = run, model, tokenizer, config
        self.step, self.outcome, self.message = step, outcome, message


class TrainFailed(Message):
    """The run could not start (bad file, a config the task cannot train...)."""

    def __init__(self, run: int, error: str) -> None:
        super().__init__()
        self.run, self.error = run, error


@dataclass
class LiveWeights:
    """What the live model holds, to continue training it when the run's config and tokenizer match."""

    config: ModelConfig
    model: Any
    tokenizer: Any


class TrainSession:
    """UI-thread handle on one run. `start(app)` launches the worker; control methods are thread-safe."""

    def __init__(self, run: int, model_config: ModelConfig, train: TrainConfig | tuple[str | None, dict[str, Any]],
                 device: str = "cpu", paused: bool = False, live: LiveWeights | None = None,
                 threads: int | None = None) -> None:
        """`train` is a TrainConfig, or (task, fields) for `train_config_for`, checked in the worker."""
        self.run, self.model_config, self.device = run, model_config, device
        self.train_config: TrainConfig | None = train if not isinstance(train, tuple) else None
        self._train_fields = train if isinstance(train, tuple) else None
        self.live, self.threads = live, threads or train_threads()
        self.control = RunControl()
        if paused:
            self.control.pause()
        self.trainer: Any = None  # set by the worker once built
        self.worker: Worker | None = None
        self.error: str | None = None  # the engine's message for a non-finite loss
        self.ended = False
        self._poster: Any = None
        self._last_align = 0.0
        self._align_example: Any = None

    # -- control (UI thread) -----------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self.control.paused

    @property
    def active(self) -> bool:
        return not self.ended

    def pause(self) -> None:
        self.control.pause()

    def resume(self) -> None:
        self.control.resume()

    def stop(self) -> None:
        self.control.stop()

    def start(self, app: Any) -> Worker:
        """`app`: the widget that receives the messages and owns the worker (the Train view)."""
        self._poster = app
        self.worker = app.run_worker(self._work, name=f"train run {self.run}", group="train", thread=True,
                                     exit_on_error=False)
        return self.worker

    def step_once(self, app: Any) -> Worker | None:
        """One optimizer step in a short worker, while paused (the app's step mode)."""
        if self.trainer is None or not self.paused or self.ended:
            return None
        return app.run_worker(self._one_step, name=f"train run {self.run}: one step", group="train-step",
                              thread=True, exclusive=True, exit_on_error=False)

    def example_text(self) -> tuple[str, str] | None:
        """The held-out example the alignment grid shows, as (source, target) text; None for text runs."""
        if self._align_example is None or self.trainer is None:
            return None
        src_ids, tgt_ids = self._align_example
        return self.trainer.tokenizer.decode(src_ids), self.trainer.tokenizer.decode(tgt_ids)

    # -- worker thread -----------------------------------------------------------------------------
    def _post(self, message: Message) -> None:
        self._poster.post_message(message)

    def _work(self) -> None:
        import torch

        torch.set_num_threads(self.threads)
        try:
            trainer = self._build()
        except Exception as err:  # noqa: BLE001 - a run that cannot start is a message, never a crash
            self.ended = True
            self._post(TrainFailed(self.run, one_line(err)))
            return
        outcome, message = "error", ""
        try:
            last = trainer.run()
            outcome = last.kind
            message = self.error or _summary(last)
        except Exception as err:  # noqa: BLE001 - the trainer already kept the last good weights
            message = one_line(err)
        if self.error:
            outcome = "error"
        self.ended = True
        self._post(TrainEnded(self.run, trainer.model.eval(), trainer.tokenizer, trainer.model_config,
                              trainer.step_count, outcome, message))

    def _build(self) -> Any:
        import torch

        from tui_lab.train import Trainer, train_config_for
        from tui_lab.train.schedules import learning_rate

        if self.train_config is None:
            task, fields = self._train_fields
            self.train_config = train_config_for(task, **fields)
        live = self.live
        tokenizer = live.tokenizer if live is not None and live.tokenizer is not None and \
            self.train_config.task is None else None
        trainer = Trainer(self.model_config, self.train_config, device=self.device, on_event=self._on_event,
                          tokenizer=tokenizer)
        trainer.control = self.control  # pause/stop pressed while it was being built still count
        continued = live is not None and _same_model(live, trainer)
        if continued:
            with torch.no_grad():
                trainer.model.load_state_dict(live.model.state_dict())
        c, total = self.train_config, self.train_config.steps
        every = max(1, total // LR_CURVE_POINTS)
        curve = [(s, learning_rate(s, c, trainer.model_config.d_model)) for s in range(0, total, every)]
        params = sum(p.numel() for p in trainer.model.parameters())
        if trainer.is_seq2seq:
            # The longest held-out source: for numbers-de a three-digit number, where German reorders the
            # units before the tens, so the forming alignment is worth watching (a one-word one is not).
            self._align_example = max(trainer.source.task.val, key=lambda pair: len(pair[0]))
        self.trainer = trainer
        estimate = Estimate(total, tokens_per_step(trainer), trainer.flops_per_token, trainer.peak_flops)
        self._post(TrainReady(self.run, trainer.model_config, list(trainer.notes), curve, params, continued,
                              estimate))
        return trainer

    def _one_step(self) -> None:
        trainer = self.trainer
        try:
            event = trainer.step()
            every = trainer.train_config.eval_every
            if event.kind == "step" and every and trainer.step_count % every == 0:
                trainer.evaluate()
        except Exception as err:  # noqa: BLE001 - shown, and the run keeps its last good weights
            self._post(TrainFailed(self.run, one_line(err)))

    def _on_event(self, event: Any) -> None:
        """Called by the trainer on its own thread (inside its step lock for step events)."""
        if _cancelled():
            self.control.stop()  # the app is quitting: leave the loop at the next step
        if event.kind == "error":
            self.error = event.message
            self.control.stop()  # step mode: wake the paused loop so the run ends
        self._post(TrainEvent(self.run, event))
        if event.kind == "step" and self._align_example is not None and \
                time.monotonic() - self._last_align >= ALIGN_EVERY_S:
            self._last_align = time.monotonic()
            self._post_alignment(event.step)

    def _post_alignment(self, step: int) -> None:
        grid, rows, cols = cross_attention(self.trainer, self._align_example)
        self._post(Alignment(self.run, step, grid, rows, cols))


def cross_attention(trainer: Any, example: tuple[list[int], list[int]]) -> tuple[list[list[float]], list, list]:
    """Teacher-forced cross-attention of one (src, tgt) pair: rows the predicted target tokens, cols the source."""
    import torch

    model, tok = trainer.model, trainer.tokenizer
    src_ids, tgt_ids = example
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)  # (1, S)
    tgt_in = torch.tensor([[tok.bos_id, *tgt_ids]], device=device)  # (1, T)
    was_training = model.training
    model.eval()  # no dropout, and no draw from the trainer's RNG
    try:
        with torch.no_grad():
            out = model.run(src, tgt_in, need_weights=True)
    finally:
        model.train(was_training)
    cross = [a for a in out.attentions if a.kind == "cross"]
    grid = cross[-1].weights[0].float().mean(0).cpu().tolist()  # (T, S), mean of heads
    rows = tok.token_strings([*tgt_ids, tok.eos_id])
    return grid, rows, tok.token_strings(src_ids)


def _cancelled() -> bool:
    try:
        return get_current_worker().is_cancelled
    except Exception:  # noqa: BLE001 - not on a worker thread (a direct call in a test)
        return False


def _same_model(live: LiveWeights, trainer: Any) -> bool:
    """The live weights fit this run: the same config, and the same tokens behind the ids."""
    if live.model is None or live.config != trainer.model_config:
        return False
    if live.tokenizer is None:
        return True  # random weights of the same shape: continuing is just another starting point
    vocab = trainer.model_config.vocab
    try:
        ids = list(range(vocab))
        return live.tokenizer.token_strings(ids) == trainer.tokenizer.token_strings(ids)
    except (ValueError, AttributeError, IndexError):
        return False


def _summary(event: Any) -> str:
    parts = [f"{event.kind} at step {event.step}"]
    for name in ("train_loss", "val_loss", "exact_match"):
        value = getattr(event, name, None)
        if value is not None:
            parts.append(f"{name.replace('_', ' ')} {value:.4g}")
    return ", ".join(parts)
