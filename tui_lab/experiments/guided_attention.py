"""guided-attention: the ways seed 002 names to keep cross-attention on the path, side by side.

Seed 002 (section 4, Tips 2): where a target word should look in the source often follows a path (in speech,
copying, transliteration: the diagonal). Four cross-attentions train the same preset on each task with the
task's defaults, the same steps and seed: `softmax` (plain), `prior` (softmax plus Tachibana et al. 2017's
diagonal penalty, `guided_attention` = weight: a loss, not an architecture), `location-aware` (Chorowski et
al. 2015: the previous alignment moves every key) and `monotonic` (Raffel et al. 2017: hard attention that
only moves forward at decoding). Every `every` steps, the share of held-out target words whose most-attended
source word (last decoder layer, mean of heads) is the diagonal's (`diagonal_agreement`); steps to alignment
is the first check at >= threshold. numbers-de's German puts units before tens ("forty seven" -> "sieben und
vierzig"), which no monotonic alignment can follow. README's "Seed 002's sequence-to-sequence methods" holds
the full run's table (seeds 0 and 1).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, span
from tui_lab.experiments.guided_alignment import agreement, example_grid
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

KINDS = ("softmax", "prior", "location-aware", "monotonic")
TASKS = ("copy", "numbers-de", "reverse")


def _one(options: dict[str, Any], task: str, kind: str, data, progress: Progress, cancel: Cancel) -> dict[str, Any]:
    """Train one kind on one task; its agreement curve, steps to alignment, exact match and example grid."""
    import torch

    from tui_lab.presets import load_preset

    config = load_preset(options["preset"], cross_attention="softmax" if kind == "prior" else kind)
    train = task_train_config(task, options, guided_attention=options["weight"] if kind == "prior" else 0.0)
    torch.manual_seed(options["seed"])
    checks: list[tuple[int, float]] = []
    held_out: list[Any] = []

    def measure(trainer) -> None:
        if not held_out:
            held_out.append(trainer.source.batch("val", 128, torch.Generator().manual_seed(1)))
        checks.append((trainer.step_count, agreement(trainer.model, held_out[0])))

    r = task_run(config, train, data, progress, cancel, f"{task} {kind}", options["every"], measure)
    reached = next((step for step, share in checks if share >= options["threshold"]), None)
    return {"run": r, "checks": checks, "reached": reached, "grid": example_grid(r.trainer.model, data, task)}


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("guided-attention", options)
    tasks, kinds = options["tasks"], options["kinds"]
    table = result.tables.setdefault("runs", Table(f"held out; aligned = diagonal agreement >= {options['threshold']}",
                                                   ["task", "kind", "exact match", "steps to alignment",
                                                    "final agreement"]))
    total, done = len(tasks) * len(kinds), 0
    for task in tasks:
        data = task_data(task, options["seed"])
        plot = result.plot(f"agreement_{task}", f"diagonal agreement, {task}", "step", "share on the diagonal")
        for kind in kinds:
            check(cancel, "guided-attention")
            one = _one(options, task, kind, data, span(progress, done / total, (done + 1) / total), cancel)
            final = one["checks"][-1][1] if one["checks"] else None
            plot.add(kind, [s for s, _ in one["checks"]], [a for _, a in one["checks"]])
            table.rows.append([task, kind, rounded(one["run"].exact_match, 3), one["reached"], rounded(final, 3)])
            key = f"{task}_{kind}".replace("-", "_")
            result.scalars |= {f"exact_match_{key}": rounded(one["run"].exact_match),
                               f"steps_to_alignment_{key}": one["reached"], f"agreement_{key}": rounded(final)}
            result.grids[f"alignment_{key}"] = one["grid"]
            done += 1
            progress(done / total, f"{task} {kind} done", result)
    result.notes[:0] = [f"{row[0]} {row[1]}: exact match {row[2]}, "
                        + (f"aligned at step {row[3]}" if row[3] else f"never aligned (agreement {row[4]})")
                        for row in table.rows][:4]
    return result


def _check(options: dict[str, Any]) -> None:
    check_choices(options, "tasks", TASKS)
    check_choices(options, "kinds", KINDS)
    if not 0 < options["threshold"] <= 1:
        raise ValueError(f"threshold ({options['threshold']}) must be above 0 and at most 1")
    at_least(options, "every", 1)


EXPERIMENT = Experiment(
    name="guided-attention",
    title="Guided cross-attention: prior, location-aware, monotonic",
    lesson="Seed 002, section 4, Tips 2: cross-attention that should follow a path (the diagonal) can be pushed "
           "onto it by a prior, or built to move along it (location-aware, monotonic).",
    options={"tasks": ("copy", "numbers-de"), "kinds": KINDS, "weight": 1.0, "every": 50, "threshold": 0.9,
             **SEQ_OPTIONS},
    quick={"tasks": ("copy",), "steps": 100, "every": 25, "eval_examples": 150},
    runner=run,
    help={"tasks": "tasks, comma-separated (copy wants the diagonal; numbers-de's German fights it)",
          "kinds": "cross-attentions compared (prior: softmax + the diagonal penalty)",
          "weight": "the diagonal penalty's weight in the prior run", "every": "steps between agreement checks",
          "threshold": "diagonal agreement that counts as aligned", **SEQ_HELP},
    check_options=_check,
)
