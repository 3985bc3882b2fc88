"""sweep: one config or training field over a list of values (and seeds), run one after another.

The general form every training experiment here is an instance of: the same small language model and
data, one field changed per run, each run's loss curve overlaid and a table of where each ended. A
finished run is handed to `progress` as a partial result, so a face can draw the sweep as it goes.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve


def field_kind(name: str) -> str:
    """'model' or 'train': which config the field belongs to (a one-line ValueError for neither)."""
    from tui_lab.config import SHORTCUTS, field_names
    from tui_lab.train.config import train_field_names

    if name in field_names() or name in SHORTCUTS:
        return "model"
    if name in train_field_names():
        return "train"
    raise ValueError(f"field ({name!r}) must be a model or training field, e.g. positions, norm, d_model, lr")


def parse_values(name: str, texts: tuple[str, ...]) -> list[Any]:
    """Each value text in the field's own type (the same parsing as `--set` on `tui-lab train`)."""
    from tui_lab.config import parse_value
    from tui_lab.train.config import parse_train_value

    parse = parse_value if field_kind(name) == "model" else parse_train_value
    return [parse(name, text) for text in texts]


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    name, values, seeds = options["field"], parse_values(options["field"], options["values"]), options["seeds"]
    runs = [(value, seed) for value in values for seed in seeds]
    configs = [_configs(options, name, value, seed) for value, seed in runs]  # every value checked before any run
    result = Result("sweep", options)
    plot = result.plot("loss", f"training loss, {name} swept", "step", "train loss")
    table = result.tables.setdefault("runs", Table(f"{name}: where each run ended", [
        name, "seed", "params", "train loss", "val loss"]))
    data = char_data()
    for i, ((value, seed), (model_config, train_config)) in enumerate(zip(runs, configs, strict=True)):
        label = f"{name}={value}" + (f" seed {seed}" if len(seeds) > 1 else "")
        curve = train_curve(model_config, train_config, span(progress, i / len(runs), (i + 1) / len(runs)),
                            cancel, label, data=data)
        plot.add(label, curve.steps, curve.losses)
        table.rows.append([str(value), seed, curve.params, round(curve.losses[-1], 4) if curve.losses else None,
                           None if curve.final_val is None else round(curve.final_val, 4)])
        if curve.error:
            result.notes.append(f"{label}: {curve.error}")
        progress((i + 1) / len(runs), f"{label} done", result)
    _summarise(result, name, table)
    return result


def _configs(options: dict[str, Any], name: str, value: Any, seed: int):
    changes = {name: value} if field_kind(name) == "model" else {}
    train_changes = ({name: value} if field_kind(name) == "train" else {}) | {"seed": seed}
    return lm_config(options, **changes), lm_train_config(options, **train_changes)


def _summarise(result: Result, name: str, table: Table) -> None:
    finished = [row for row in table.rows if row[-1] is not None]
    if finished:
        best = min(finished, key=lambda row: row[-1])
        result.scalars = {"runs": len(table.rows), "best": best[0], "best_val_loss": best[-1]}
        result.notes.append(f"lowest val loss: {name}={best[0]} ({best[-1]:.4f}) after {result.options['steps']} "
                            "steps; one toy run per value and seed, so small gaps are noise")


def _check(options: dict[str, Any]) -> None:
    parse_values(options["field"], options["values"])
    if options["field"] in ("steps", "seed"):
        raise ValueError(f"field ({options['field']!r}): sweep another field; steps and seed are the sweep's own")


EXPERIMENT = Experiment(
    name="sweep",
    title="Sweep any one field",
    lesson="Seed 000: every choice in the architecture is a knob; turn one and keep everything else fixed. "
           "The named experiments are instances of this.",
    options={"field": "positions", "values": ("learned", "sinusoidal", "rope", "alibi", "none"), "seeds": (0,),
             **LM_OPTIONS},
    quick={"values": ("learned", "none"), "steps": 60},
    runner=run,
    help={"field": "a model field (positions, norm, d_model...) or a training field (lr, warmup...)",
          "values": "the values, separated by commas", "seeds": "seeds per value, separated by commas", **LM_HELP},
    check_options=_check,
)
