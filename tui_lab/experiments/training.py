"""Short training runs for experiments: the lab's own Trainer, with its loss curve kept and cancel wired in.

Every experiment that trains goes through `train_curve`, so its runs are the same runs `tui-lab train`
makes (AdamW, the schedule, clipping), seeded and reproducible.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from tui_lab.experiments.base import Cancel, Cancelled, Progress


@dataclass
class Curve:
    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    val_steps: list[int] = field(default_factory=list)
    val_losses: list[float] = field(default_factory=list)
    final_val: float | None = None
    error: str | None = None  # a non-finite loss stopped the run (the curve holds the steps before it)
    model: Any = None
    params: int = 0
    expert_load: list[list[int]] | None = None  # MoE runs: the last step's tokens per (layer, expert)
    tokens_per_s: float = 0.0


@functools.lru_cache(maxsize=1)
def char_data(val_fraction: float = 0.1):
    """The built-in English corpus with a character tokenizer, built once per process (seconds)."""
    from tui_lab.data.corpus import builtin_corpus
    from tui_lab.data.lm import lm_data
    from tui_lab.data.tokenizers import char_tokenizer

    text = builtin_corpus()
    return lm_data(text, char_tokenizer(text), val_fraction)


def train_curve(model_config, train_config, progress: Progress, cancel: Cancel, label: str = "",
                data: Any = None, model: Any = None, tokenizer: Any = None) -> Curve:
    """Train and keep every step's loss and each evaluation; `cancel()` stops between steps (Cancelled)."""
    from tui_lab.train import Trainer
    from tui_lab.train.events import DoneEvent, ErrorEvent, EvalEvent, StepEvent

    curve, total = Curve(), train_config.steps

    def on_event(event) -> None:
        if isinstance(event, StepEvent):
            curve.steps.append(event.step)
            curve.losses.append(event.train_loss)
            curve.expert_load, curve.tokens_per_s = event.expert_load, event.tokens_per_s
            progress(event.step / total, f"{label} step {event.step}/{total} loss {event.train_loss:.3f}")
            if cancel():
                trainer.stop()
        elif isinstance(event, EvalEvent):
            curve.val_steps.append(event.step)
            curve.val_losses.append(event.val_loss)
        elif isinstance(event, DoneEvent):
            curve.final_val = event.val_loss
        elif isinstance(event, ErrorEvent):
            curve.error = event.message

    # MFU is not an experiment's result, so the trainer is given a peak rather than measuring one.
    trainer = Trainer(model_config, train_config, device="cpu", on_event=on_event, data=data, model=model,
                      tokenizer=tokenizer, peak_flops=math.inf)
    trainer.evaluate()  # step 0: where the run starts (a fine-tune's starting point on its new data)
    trainer.run()
    if trainer.control.stopped:
        raise Cancelled(label)
    curve.model, curve.params = trainer.model, sum(p.numel() for p in trainer.model.parameters())
    return curve


# The small language model the training experiments share: character-level on the built-in corpus, sized so
# that a step takes a few tens of milliseconds on a shared 2-core CPU.
LM_OPTIONS: dict[str, Any] = {"preset": "gpt2-toy", "layers": 2, "d_model": 64, "heads": 4, "steps": 200,
                              "batch_size": 16, "seq_len": 64, "lr": 3e-3, "seed": 0, "threads": 1}
LM_HELP = {"preset": "the architecture trained (its sizes replaced by layers, d_model, heads)",
           "steps": "training steps per run", "batch_size": "sequences per step", "seq_len": "tokens per sequence",
           "lr": "peak learning rate (cosine schedule)", "seed": "weights, dropout and batches",
           "threads": "torch CPU threads for the runs (the toy's ops are too small to share out)"}


def lm_config(options: dict[str, Any], **changes: Any):
    """The options' model: the preset with the experiment's sizes (d_ff 4 x d_model) and `changes` on top."""
    from tui_lab.presets import load_preset

    sizes = {"layers": options["layers"], "d_model": options["d_model"], "heads": options["heads"],
             "d_ff": 4 * options["d_model"], "dropout": 0.0}
    return load_preset(options["preset"], **(sizes | changes))


def lm_train_config(options: dict[str, Any], **changes: Any):
    """The options' training run: an evaluation every quarter of the run, no samples, nothing saved."""
    from tui_lab.train.config import train_config_for

    steps = changes.get("steps", options["steps"])
    values = dict(steps=steps, batch_size=options["batch_size"], seq_len=options["seq_len"], lr=options["lr"],
                  seed=options["seed"], eval_every=max(steps // 4, 1), eval_batches=4, sample_every=0,
                  warmup=min(40, steps // 10))
    return train_config_for(None, **(values | changes))
