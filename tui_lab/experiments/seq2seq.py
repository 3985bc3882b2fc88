"""Seq2seq training runs for the seed-002 method experiments: the lab's own Trainer on a task, step by step.

`task_run` trains transformer-2017-toy (or the options' preset) on one task with the task's own defaults and
the options' steps and seed, keeps every step's loss (and teacher-forcing rate), calls `check(trainer)` at the
checks a caller asks for, and ends with the trainer's held-out evaluation (greedy exact match). Cancel is
polled between steps. The same runs `tui-lab train --task T` makes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui_lab.experiments.base import Cancel, Cancelled, Progress, at_least

SEQ_TASKS = ("numbers-de", "copy", "reverse", "names")
# The options every seq2seq experiment shares. steps 0: each task's own default (numbers-de 400, copy 300, ...).
SEQ_OPTIONS: dict[str, Any] = {"preset": "transformer-2017-toy", "steps": 0, "seed": 0, "eval_examples": 300,
                               "threads": 1}
SEQ_HELP = {"preset": "the encoder-decoder trained (each run changes one field of it)",
            "steps": "training steps per run (0: the task's own default)",
            "seed": "weights, dropout and batches (the same for every run)",
            "eval_examples": "held-out pairs decoded greedily for exact match (0: all)",
            "threads": "torch CPU threads for the runs (the toy's ops are too small to share out)"}


@dataclass
class TaskRun:
    label: str
    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    teacher_forcing: list[float] = field(default_factory=list)
    exact_match: float | None = None
    val_loss: float | None = None
    error: str | None = None  # a non-finite loss stopped the run
    trainer: Any = None
    last_step: Any = None  # the last StepEvent (MoE runs read its expert load)


def task_data(name: str, seed: int = 0):
    """A task by name; `reverse-long` is the long-sequence reverse task of scheduled-sampling."""
    from tui_lab.data import load_task

    if name == "reverse-long":
        from tui_lab.experiments.long_reverse import long_reverse_task

        return long_reverse_task(seed)
    return load_task(name)


def task_train_config(name: str, options: dict[str, Any], **changes: Any):
    """The task's training defaults with the options' steps, seed and held-out size; no samples, nothing saved."""
    from tui_lab.train import train_config_for

    base = "reverse" if name == "reverse-long" else name
    values = dict(seed=options["seed"], eval_every=0, sample_every=0, eval_examples=options["eval_examples"])
    if options["steps"]:
        values["steps"] = options["steps"]
    config = train_config_for(base, **(values | changes))
    return config.replace(task=None) if name == "reverse-long" else config


def task_run(model_config, train_config, data, progress: Progress, cancel: Cancel, label: str,
             every: int = 0, check: Callable[[Any], None] | None = None) -> TaskRun:
    """Train to `train_config.steps`, calling `check(trainer)` every `every` steps and at the end."""
    from tui_lab.train import Trainer
    from tui_lab.train.events import ErrorEvent

    run, total = TaskRun(label), train_config.steps
    trainer = Trainer(model_config, train_config, device="cpu", data=data, peak_flops=math.inf)
    run.trainer = trainer
    while trainer.step_count < total:
        if cancel():
            raise Cancelled(label)
        event = trainer.step()
        if isinstance(event, ErrorEvent):
            run.error = event.message
            return run
        run.steps.append(event.step)
        run.losses.append(event.train_loss)
        run.teacher_forcing.append(1.0 if event.teacher_forcing is None else event.teacher_forcing)
        run.last_step = event
        progress(event.step / total, f"{label}: step {event.step}/{total} loss {event.train_loss:.3f}")
        if check is not None and every and (event.step % every == 0 or event.step == total):
            check(trainer)
    done = trainer.evaluate()
    run.exact_match, run.val_loss = done.exact_match, done.val_loss
    return run


def rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def check_counts(options: dict[str, Any]) -> None:
    """One-line refusals for the counts every seq2seq experiment shares."""
    if options["steps"] and options["steps"] < 2:
        raise ValueError(f"steps ({options['steps']}) must be 0 (the task's default) or at least 2")
    at_least(options, "eval_examples", 0)


def check_choices(options: dict[str, Any], name: str, allowed: tuple[str, ...]) -> None:
    """A one-line refusal unless option `name` (a value or a tuple of them) is among `allowed`, each value once."""
    values = options[name] if isinstance(options[name], tuple) else (options[name],)
    for value in values:
        if value not in allowed:
            raise ValueError(f"{name} ({value!r}) must be one of: {', '.join(allowed)}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} ({', '.join(values)}) must name each value once")
    check_counts(options)
