"""activation-none: without a nonlinearity the FFN collapses to one matrix, and the model loses what it bought.

Seed 002's Q&A: why does the FFN need an activation? Without one, down(up(x)) = W_down W_up x + b', a single
d_model x d_model linear map whatever d_ff is, so the block adds no capacity a linear layer does not have.
The same preset trains twice on one task (the task's defaults, the same steps and seed): with its ReLU and
with `activation = none`. The result keeps both loss curves, held-out exact match, and for the collapsed model
each FFN's equivalent matrix (tui_lab.model.ffn_rank): its rank (at most min(d_model, d_ff)) and effective
rank, and how far the trained FFN is from that one matrix on random inputs (float rounding: it IS the matrix).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, check, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.seq2seq import (
    SEQ_HELP,
    SEQ_OPTIONS,
    SEQ_TASKS,
    check_choices,
    rounded,
    task_data,
    task_run,
    task_train_config,
)

ACTIVATIONS = ("relu", "none")


def linear_error(model, samples: int = 64, seed: int = 0) -> float:
    """max |ffn(x) - (x W'^T + b')| over every FFN of a model without activation, on random inputs."""
    import torch

    from tui_lab.model.ffn_rank import equivalent_linear

    gen, worst = torch.Generator().manual_seed(seed), 0.0
    with torch.no_grad():
        for stack in ("encoder", "decoder"):
            for block in getattr(model, stack, None) or []:
                w, b = equivalent_linear(block.ffn)
                x = torch.randn(samples, w.shape[0], generator=gen)  # (samples, E)
                direct = x @ w.T + (0 if b is None else b)
                worst = max(worst, (block.ffn(x) - direct).abs().max().item())
    return worst


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.model.ffn_rank import ffn_ranks
    from tui_lab.presets import load_preset

    result, task = Result("activation-none", options), options["task"]
    data = task_data(task, options["seed"])
    plot = result.plot("loss", f"training loss, {task}", "step", "loss")
    runs = result.tables.setdefault("runs", Table(f"{task}, held out", ["activation", "exact match", "val loss"]))
    for i, activation in enumerate(ACTIVATIONS):
        check(cancel, "activation-none")
        r = task_run(load_preset(options["preset"], activation=activation), task_train_config(task, options), data,
                     span(progress, i / 2, (i + 1) / 2), cancel, f"activation {activation}")
        plot.add(activation, r.steps, r.losses)
        runs.rows.append([activation, rounded(r.exact_match, 3), rounded(r.val_loss)])
        result.scalars |= {f"exact_match_{activation}": rounded(r.exact_match), f"val_loss_{activation}":
                           rounded(r.val_loss)}
        progress((i + 1) / 2, f"activation {activation} done", result)
    ranks = ffn_ranks(r.trainer.model)
    table = result.tables.setdefault("ffn_rank", Table("activation none: each FFN as one matrix W' = W_down W_up", [
        "FFN", "W' shape", "rank", "at most", "effective rank"]))
    for x in ranks:
        table.rows.append([f"{x.stack} {x.layer}", f"{x.d_model}x{x.d_model}", x.rank, x.bound,
                           round(x.effective_rank, 1)])
    result.scalars |= {"ffn_rank_max": max(x.rank for x in ranks), "ffn_rank_bound": ranks[0].bound,
                       "d_ff": ranks[0].d_ff, "linear_error": linear_error(r.trainer.model)}
    s = result.scalars
    result.notes[:0] = [f"exact match {s['exact_match_relu']} with ReLU, {s['exact_match_none']} without; val loss "
                        f"{s['val_loss_relu']} vs {s['val_loss_none']}",
                        f"without activation each FFN (d_ff {s['d_ff']}) is one {ranks[0].d_model}x"
                        f"{ranks[0].d_model} matrix (largest rank {s['ffn_rank_max']}; it differs from that matrix "
                        f"by {s['linear_error']:.1e}, float rounding)"]
    return result


def _check(options: dict[str, Any]) -> None:
    check_choices(options, "task", tuple(t for t in SEQ_TASKS if t != "names"))


EXPERIMENT = Experiment(
    name="activation-none",
    title="An FFN without activation is one matrix",
    lesson="Seed 002's Q&A: without a nonlinearity the FFN's two layers collapse to one linear map, whatever "
           "d_ff is.",
    options={"task": "numbers-de", **SEQ_OPTIONS, "steps": 300},
    quick={"steps": 150, "eval_examples": 200},
    runner=run,
    help={"task": "the task both runs train on (numbers-de, copy, reverse)", **SEQ_HELP},
    check_options=_check,
)
