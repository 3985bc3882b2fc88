"""scheduled-sampling: feed the decoder its own predictions during training, more and more often.

Seed 002, section 4, Tips 4 (Bengio et al. 2015): teacher forcing trains the decoder on gold previous words,
but at inference it reads its own, so one early mistake puts it where it never trained (exposure bias).
Scheduled sampling feeds the gold word with probability p_i that decays by a schedule (linear, exponential,
inverse sigmoid; tui_lab/train/scheduled_sampling.py fits each rate to the run's length). Each schedule trains
the same preset on each task with the same steps and seed; the result draws p_i over the run and each run's
loss, and tables held-out exact match. `reverse-long` (12..20 words, tui_lab/experiments/long_reverse.py) is
where exposure bias has room to show.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, check, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.seq2seq import (
    SEQ_HELP,
    SEQ_OPTIONS,
    check_choices,
    rounded,
    task_data,
    task_run,
    task_train_config,
)

SCHEDULES = ("none", "linear", "exponential", "inverse_sigmoid")
TASKS = ("reverse-long", "numbers-de", "copy", "reverse")


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.presets import load_preset

    result = Result("scheduled-sampling", options)
    tasks, schedules = options["tasks"], options["schedules"]
    forcing = result.plot("teacher_forcing", "p_i: the chance the decoder reads the gold word", "step", "p")
    table = result.tables.setdefault("exact_match", Table("held-out exact match", ["task", *schedules]))
    total, done = len(tasks) * len(schedules), 0
    for task in tasks:
        data, row = task_data(task, options["seed"]), [task]
        loss = result.plot(f"loss_{task}", f"training loss, {task}", "step", "loss")
        for schedule in schedules:
            check(cancel, "scheduled-sampling")
            r = task_run(load_preset(options["preset"]), task_train_config(task, options, scheduled_sampling=schedule),
                         data, span(progress, done / total, (done + 1) / total), cancel, f"{task} {schedule}")
            loss.add(schedule, r.steps, r.losses)
            if task == tasks[0]:
                forcing.add(schedule, r.steps, r.teacher_forcing)
                result.scalars[f"final_teacher_forcing_{schedule}"] = round(r.teacher_forcing[-1], 4)
            row.append(rounded(r.exact_match, 3))
            result.scalars[f"exact_match_{task}_{schedule}".replace("-", "_")] = rounded(r.exact_match)
            done += 1
            progress(done / total, f"{task} {schedule} done", result)
        table.rows.append(row)
    result.notes[:0] = [f"{row[0]}: " + ", ".join(f"{s} {v}" for s, v in zip(schedules, row[1:], strict=True))
                        for row in table.rows]
    return result


def _check(options: dict[str, Any]) -> None:
    check_choices(options, "tasks", TASKS)
    check_choices(options, "schedules", SCHEDULES)


EXPERIMENT = Experiment(
    name="scheduled-sampling",
    title="Scheduled sampling vs teacher forcing",
    lesson="Seed 002, section 4, Tips 4: a decoder trained only on gold prefixes drifts on its own outputs "
           "(exposure bias); scheduled sampling feeds it its own predictions during training.",
    options={"tasks": ("reverse-long", "numbers-de"), "schedules": SCHEDULES, **SEQ_OPTIONS, "steps": 300},
    quick={"tasks": ("numbers-de",), "steps": 150, "eval_examples": 150},  # reverse-long: 0.00 for all at 120 steps
    runner=run,
    help={"tasks": "tasks, comma-separated (reverse-long: 12..20 words)", "schedules": "schedules compared",
          **SEQ_HELP},
    check_options=_check,
)
