"""One trainer for both families: AdamW, a schedule, clipping, label smoothing, evaluation, control.

The app runs `run()` in a child process (`train/process.py`) and pauses, resumes and stops it through a shared
`RunControl`; the CLI runs it in its own process; tests and the app's step mode call `step()`. Everything it
has to say goes out as events.

Determinism: the model's initial weights, dropout masks and the batches all come from streams seeded by
`seed`. Dropout draws from a private copy of torch's global RNG that is swapped in only for the forward
and backward pass, so whatever else the app does with the global RNG between steps changes nothing; a
checkpoint stores that copy and the batch generator's state, so 50 + 50 steps equal 100.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tui_lab.analysis.cost import training_flops_per_token
from tui_lab.checkpoint import SaveError
from tui_lab.config import ModelConfig
from tui_lab.devices import out_of_memory, out_of_memory_line, pick_device, release_cached_memory
from tui_lab.model import build_model
from tui_lab.model.moe import record_routing
from tui_lab.run_control import Controlled, RunControl
from tui_lab.train import distributed
from tui_lab.train.config import TrainConfig
from tui_lab.train.data_source import build_source
from tui_lab.train.evaluation import Evaluator
from tui_lab.train.events import (
    ErrorEvent,
    EvalEvent,
    Event,
    SampleEvent,
    StartEvent,
    StepEvent,
)
from tui_lab.train.gradients import clip_gradients, counted_tokens, moe_fields, shared_stats
from tui_lab.train.layer_groups import layer_groups
from tui_lab.train.objective import check_methods, loss_sums
from tui_lab.train.routing import router_stats
from tui_lab.train.run_loop import RunLoop
from tui_lab.train.scheduled_sampling import sampled_inputs, teacher_forcing
from tui_lab.train.schedules import learning_rate
from tui_lab.train.setup import as_source, fit_model_config, given_config, make_optimizer, starting_model
from tui_lab.train.throughput import Throughput

OOM_HINT = "try a smaller batch_size or seq_len (or a smaller model)"


class Trainer(Controlled):
    def __init__(self, model_config: ModelConfig | None, train_config: TrainConfig, device: str | None = "cpu",
                 on_event: Callable[[Event], None] | None = None, data: Any = None, tokenizer: Any = None,
                 peak_flops: float | None = None, model: nn.Module | None = None) -> None:
        """`model`: starting weights (a pretrained GPT-2, a resumed run), trained in place, with `tokenizer`
        (or `data`) the one they were trained with; its vocab is kept and `model_config` may be None."""
        self.train_config = c = train_config
        self.on_event = on_event
        self.control = RunControl()
        self._lock = threading.Lock()
        self.dist, self.device = distributed.setup(pick_device(device), c.batch_size)
        if model is not None:
            model_config = given_config(model, model_config, data, tokenizer)
        self.source = as_source(data, c) if data is not None else build_source(c, tokenizer, model_config)
        self.model_config, self.notes = fit_model_config(model_config, c, self.source, keep_vocab=model is not None)
        check_methods(c, self.source.is_seq2seq, self.dist.enabled)
        with out_of_memory(self.device, "building the model to train", OOM_HINT):
            self.model, self._cpu_rng, self._device_rng = self._build_model(model)
            self.ddp_model = distributed.wrap(self.model, self.dist, self.device)
            self.optimizer = make_optimizer(self.model, c, self.device)
        self.groups = layer_groups(self.model)
        self.data_gen = torch.Generator().manual_seed(c.seed)
        self.step_count = 0
        self.flops_per_token = training_flops_per_token(self.model_config,
                                                        self.source.context() or self.model_config.max_len)
        self.throughput = Throughput(self.device, self.peak_dtype, self.flops_per_token, self.dist.world, peak_flops)
        self.last_loss: float | None = None
        self.last_eval: EvalEvent | None = None
        self._tokens_seen, self._train_seconds = 0, 0.0
        self._stop_agreed = False
        self._started = False
        self._methods: dict[str, float | None] = {}  # the step's teacher forcing and guided-attention loss
        self.evaluator = Evaluator(c, self.source, self.dist, self.device)
        self.save_failure: SaveError | None = None  # the last save the disk or the folder refused (the CLI: exit 2)

    # -- building ----------------------------------------------------------------------------------
    def _build_model(self, start: nn.Module | None = None) -> tuple[nn.Module, torch.Tensor, torch.Tensor | None]:
        """Weights from `seed` (the same on every rank) or from `start`; dropout streams seeded per rank."""
        c, cuda = self.train_config, self.device.startswith("cuda")
        with torch.random.fork_rng(devices=[self.device] if cuda else [], device_type="cuda"):
            torch.manual_seed(c.seed)
            model = build_model(self.model_config, device=self.device) if start is None else \
                starting_model(start, self.model_config, self.device)
            torch.manual_seed(c.seed * 1000 + 1 + self.dist.rank)
            cpu_rng = torch.get_rng_state()
            device_rng = torch.cuda.get_rng_state(self.device) if cuda else None
        return model, cpu_rng, device_rng

    @contextlib.contextmanager
    def _training_rng(self):
        """Swap the trainer's own RNG state in for dropout, and keep where it got to."""
        cuda = self._device_rng is not None
        with torch.random.fork_rng(devices=[self.device] if cuda else [], device_type="cuda"):
            torch.set_rng_state(self._cpu_rng)
            if cuda:
                torch.cuda.set_rng_state(self._device_rng, self.device)
            yield
            self._cpu_rng = torch.get_rng_state()
            if cuda:
                self._device_rng = torch.cuda.get_rng_state(self.device)

    @property
    def peak_dtype(self) -> torch.dtype:
        """The matmul dtype MFU is measured against: bf16's peak for a bf16 autocast run."""
        return torch.bfloat16 if self.train_config.precision == "bf16" else torch.float32

    @property
    def peak_flops(self) -> float:
        return self.throughput.peak_flops

    @property
    def is_seq2seq(self) -> bool:
        return self.source.is_seq2seq

    @property
    def tokenizer(self):
        return self.source.tokenizer

    # -- the run, and what it does between steps --------------------------------------------------------
    def run(self) -> Event:
        """Train until `steps`, a stop, or a non-finite loss; returns the last event (done/stopped/error)."""
        return RunLoop(self).run()

    def evaluate(self) -> EvalEvent:
        """Validation loss on the fixed held-out batches (and exact match for seq2seq), sent as an event."""
        self.last_eval = self.evaluator.evaluate(self.model, self.step_count)
        self.emit(self.last_eval)
        return self.last_eval

    def sample(self) -> SampleEvent | None:
        """A completion or a greedy translation of a held-out source (rank 0 only), sent as an event."""
        event = self.evaluator.sample(self.model, self.step_count)
        if event is not None:
            self.emit(event)
        return event

    def stopping(self) -> bool:
        # Under DDP every rank must stop at the same step, so only the all-reduced flag counts.
        return self._stop_agreed if self.dist.enabled else self.control.stopped

    def rates(self) -> tuple[float, float | None]:
        """tokens/s and MFU over every step this process ran (None before the first step)."""
        return self.throughput.rates()

    def announce(self) -> None:
        """The run's StartEvent, once (the first step or `run()`, whichever comes first)."""
        if self._started:
            return
        self._started = True
        params = sum(p.numel() for p in self.model.parameters())
        self.emit(StartEvent(self.step_count, self.train_config.steps, self.model_config.to_dict(),
                             self.train_config.to_dict(), params, self.device, self.dist.world, list(self.notes)))

    def emit(self, event: Event) -> None:
        if self.on_event is not None and self.dist.is_main:
            self.on_event(event)

    # -- one step ----------------------------------------------------------------------------------
    def step(self) -> StepEvent | ErrorEvent:
        """Exactly one optimizer update (or an ErrorEvent, weights untouched, if the loss is not finite)."""
        with self._lock:
            self.announce()
            try:
                return self._step()
            except Exception as err:
                line = out_of_memory_line(err, self.device, f"training step {self.step_count + 1}", OOM_HINT)
                if line is None:
                    raise
                return self._out_of_memory(line)

    def _out_of_memory(self, line: str) -> ErrorEvent:
        """The step is not applied (the optimizer never ran): drop its gradients, give the allocator's
        blocks back, and the last good weights stay usable."""
        self.optimizer.zero_grad(set_to_none=True)
        release_cached_memory(self.device)
        event = ErrorEvent(self.step_count, line)
        self.emit(event)
        return event

    def _autocast(self) -> contextlib.AbstractContextManager:
        """bf16 autocast for the forward pass only: the backward and the optimizer update stay outside it
        (autocast around the whole step left gpt2-toy 0.9 nats behind fp32 after 50 steps; around the
        forward alone, 0.002)."""
        return torch.autocast(torch.device(self.device).type, dtype=torch.bfloat16,
                              enabled=self.train_config.precision == "bf16")

    def _step(self) -> StepEvent | ErrorEvent:
        c, start = self.train_config, time.perf_counter()
        lr = learning_rate(self.step_count, c, self.model_config.d_model)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        batch = self.source.batch("train", c.batch_size, self.data_gen)  # the global batch, on every rank
        total = batch.count()
        tokens = self.source.counted(batch, self.model_config) if hasattr(self.source, "counted") else \
            counted_tokens(batch)
        local = batch.rows(*self.dist.shard(c.batch_size)).to(self.device)
        self.ddp_model.train()
        forcing = teacher_forcing(self.step_count, c) if self.is_seq2seq else None
        with self._training_rng():
            if forcing is not None:  # scheduled sampling's first pass, outside the routing record
                with self._autocast():
                    local = sampled_inputs(self.ddp_model, local, forcing)
            with record_routing(self.model) as routing:
                with self._autocast():
                    loss_sum, guide_sum = loss_sums(self.ddp_model, local, c)
                objective = loss_sum if guide_sum is None else loss_sum + c.guided_attention * guide_sum
                # DDP averages gradients over ranks; times `world` makes it the global batch's sum / total.
                objective = objective * (self.dist.world / total)
                router = router_stats(routing, self.model_config, local)
                if router is not None:  # Switch / Mixtral: the balancing loss joins the objective, scaled
                    objective = objective + c.router_aux_loss_coef * router[0]
                objective.backward()
        stats = shared_stats(loss_sum, router, guide_sum, self.control.stopped, self.device, self.dist)
        loss, self._stop_agreed = stats[0].item() / total, bool(stats[1].item() > 0)
        moe = moe_fields(stats[3:], self.dist.world, self.model_config.experts) if router is not None else {}
        self._methods = {"teacher_forcing": forcing,
                         "guided_attention_loss": stats[2].item() / total if guide_sum is not None else None}
        grad_norm, layer_norms = clip_gradients(self.groups, self.model, self.train_config.grad_clip)
        if not (math.isfinite(loss) and math.isfinite(grad_norm)):
            return self._non_finite(loss, grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step_count += 1
        # Model FLOPs follow the predicted positions; MLM predicts 15% of them but runs the model on every one.
        predicted = tokens if getattr(self.source, "family", None) == "encoder-only" else total
        return self._step_event(loss, lr, grad_norm, layer_norms, tokens, predicted, time.perf_counter() - start,
                                moe)

    def _non_finite(self, loss: float, grad_norm: float) -> ErrorEvent:
        self.optimizer.zero_grad(set_to_none=True)  # the step is not applied: the last good weights stay
        what = f"loss {loss}" if not math.isfinite(loss) else f"gradient norm {grad_norm}"
        event = ErrorEvent(self.step_count, f"{what} at step {self.step_count + 1} is not finite; training "
                                            "stopped and kept the weights of the last good step (try a lower lr)")
        self.emit(event)
        return event

    def _step_event(self, loss: float, lr: float, grad_norm: float, layer_norms: dict[str, float], tokens: int,
                    targets: int, seconds: float, moe: dict[str, Any]) -> StepEvent:
        self._tokens_seen += tokens
        self._train_seconds += seconds
        self.last_loss = loss
        self.throughput.add(tokens, targets, seconds)
        tokens_per_s, mfu = self.rates()
        event = StepEvent(self.step_count, loss, lr, grad_norm, layer_norms, tokens, tokens_per_s, mfu, seconds,
                          **moe, **self._methods)
        self.emit(event)
        return event

    # -- checkpoints -------------------------------------------------------------------------------
    def save(self, folder: str | Path | None = None) -> Path | None:
        """Write a resumable checkpoint (rank 0 only; the other ranks wait for it); a refused write rescues the
        run elsewhere (`saving.save_run`)."""
        from tui_lab.train.saving import save_run

        return save_run(self, folder)

    @classmethod
    def from_checkpoint(cls, folder: str | Path, device: str | None = "cpu",
                        on_event: Callable[[Event], None] | None = None, data: Any = None,
                        **changes: Any) -> Trainer:
        """Continue a saved run; `changes` are TrainConfig fields to change (e.g. steps=200).

        `data` must be what the run trained on when it was given as an object rather than by the config.
        """
        from tui_lab.train.state import resume_trainer

        return resume_trainer(cls, Path(folder), device, on_event, data, changes)
