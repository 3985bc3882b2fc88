"""scaling: final loss against non-embedding parameters over a width x depth grid, with a power-law fit.

Seed 001 (Kaplan et al. 2020): loss falls as a power law in the number of non-embedding parameters,
L(N) = (N_c / N)^alpha_N with alpha_N about 0.076, measured from 10^3 to 10^9 parameters with each model
trained near convergence. Here every model gets the same data and the same (small) number of steps, so the
bigger ones are further from convergence: the fitted exponent is what a toy shows on this budget, not
Kaplan's, and the result says so.
"""

from __future__ import annotations

import math
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve

KAPLAN_ALPHA_N = 0.076  # Kaplan et al. 2020, eq. 1.1


def non_embedding_params(config) -> int:
    """Kaplan's N: every parameter but the token and position embeddings (and an untied output matrix)."""
    from tui_lab.analysis import count_params

    count = count_params(config)
    return count.attention + count.ffn + count.norms


def fit_power_law(ns: list[float], losses: list[float]) -> dict[str, float]:
    """Least squares on log L = log c - alpha log N: alpha, c and r^2 of the fit in log space."""
    xs, ys = [math.log(n) for n in ns], [math.log(loss) for loss in losses]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if len(xs) < 2 or sxx == 0:
        raise ValueError("a power-law fit needs at least two models of different sizes")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    intercept = my - slope * mx
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return {"alpha": -slope, "c": math.exp(intercept), "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    grid = [(w, d) for d in options["depths"] for w in options["widths"]]
    configs = [lm_config(options, d_model=w, layers=d) for w, d in grid]  # all checked before the first run
    data = char_data()
    result = Result("scaling", options)
    curves = result.plot("loss", "training loss per model", "step", "train loss")
    table = result.tables.setdefault("models", Table("the models: same data, same steps", [
        "d_model", "layers", "non-embedding params", "total params", "val loss"]))
    for i, ((width, depth), config) in enumerate(zip(grid, configs, strict=True)):
        label = f"d{width} L{depth}"
        curve = train_curve(config, lm_train_config(options), span(progress, i / len(grid), (i + 1) / len(grid)),
                            cancel, label, data=data)
        curves.add(label, curve.steps, curve.losses)
        table.rows.append([width, depth, non_embedding_params(curve.model.config), curve.params,
                           round(curve.final_val, 4)])
        progress((i + 1) / len(grid), f"{label} done", result)
    _fit(result, table)
    return result


def _fit(result: Result, table: Table) -> None:
    ns, losses = [row[2] for row in table.rows], [row[4] for row in table.rows]
    fit = fit_power_law(ns, losses)
    points = result.plot("fit", "log10 val loss vs log10 non-embedding params", "log10 N", "log10 loss")
    for depth in sorted({row[1] for row in table.rows}):
        rows = sorted((row for row in table.rows if row[1] == depth), key=lambda row: row[2])
        points.add(f"{depth} layers", [math.log10(r[2]) for r in rows], [math.log10(r[4]) for r in rows])
    ends = [min(ns), max(ns)]
    points.add(f"fit alpha={fit['alpha']:.3f}", [math.log10(n) for n in ends],
               [math.log10(fit["c"] * n ** -fit["alpha"]) for n in ends])
    result.scalars = {"alpha": round(fit["alpha"], 4), "fit_r2": round(fit["r2"], 4), "kaplan_alpha": KAPLAN_ALPHA_N,
                      "models": len(ns), "smallest_n": min(ns), "largest_n": max(ns),
                      "steps": result.options["steps"], "best_val_loss": min(losses)}
    result.notes = [
        f"fitted L ~ N^-{fit['alpha']:.3f} (r^2 {fit['r2']:.2f}) over N = {min(ns):,}..{max(ns):,} non-embedding "
        f"parameters; Kaplan et al. found alpha_N ~ {KAPLAN_ALPHA_N} over 10^3..10^9 with each model near convergence",
        f"toy scale: {len(ns)} models, {result.options['steps']} steps each on one character-level corpus; the larger "
        "models are further from convergence on this budget, so this exponent describes the budget as much as the size"]


def _check(options: dict[str, Any]) -> None:
    at_least(options, "widths", 1)
    at_least(options, "depths", 1)
    bad = [w for w in options["widths"] if w % options["heads"]]
    if bad:
        raise ValueError(f"widths ({bad[0]}) must each be divisible by heads ({options['heads']})")
    if len(options["widths"]) * len(options["depths"]) < 2:
        raise ValueError("widths x depths must give at least two models to fit a power law")


EXPERIMENT = Experiment(
    name="scaling",
    title="Scaling: loss vs parameters",
    lesson="Seed 001 (Kaplan et al. 2020): loss follows a power law in the number of (non-embedding) parameters.",
    options={"widths": (32, 64, 96, 128), "depths": (1, 2, 4), **LM_OPTIONS, "steps": 300},
    quick={"widths": (32, 64), "depths": (1, 2), "steps": 80},
    runner=run,
    help={"widths": "d_model of each model (d_ff = 4 x d_model)", "depths": "layers of each model", **LM_HELP},
    check_options=_check,
)
