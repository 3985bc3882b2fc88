"""Turning an experiment's Result into what the Experiments view shows: figure choices, plot lines, a
table's cells, a grid, and the summary lines. Pure functions of the Result (no widgets), tested directly."""

from __future__ import annotations

from typing import Any

from tui_lab.app.widgets.line_plot import Line
from tui_lab.experiments.result import Result

SWEEP_TRAIN_FIELDS = ("lr", "warmup", "weight_decay", "batch_size", "seq_len", "label_smoothing", "grad_clip")


def figures(result: Result) -> list[tuple[str, str]]:
    """(key, what the picker says): the scalars, then every plot, table and grid of the result. Short
    labels, so the picker stays one line at 80 columns; each figure carries its full title."""
    return ([("table:", "results")] + [(f"plot:{k}", f"plot: {k}") for k in result.plots]
            + [(f"table:{k}", f"table: {k}") for k in result.tables]
            + [(f"grid:{k}", f"grid: {k}") for k in result.grids])


def finished_status(result: Result, last: Result | None, repeats: int) -> str:
    """The status line when a run ends. A rerun with the same options draws the same numbers (the seed is an
    option): the figures stand still, so the line says which run this is and why nothing moved (the long tier's
    English 160x48 walk read r on a finished order-blindness as a dead press). `repeats` counts the runs in a row
    that drew `last`'s numbers (0: new numbers)."""
    done = f"{result.experiment} done in {result.seconds:.1f} s"
    if not repeats or last is None:
        return f"{done}; e exports it"
    why = f"seed={result.options['seed']} fixes them" if "seed" in result.options else "nothing in it is random"
    return f"{done}, the same numbers (run {repeats + 1} in a row: {why}); e exports it"


def same_numbers(result: Result, last: Result | None) -> bool:
    """Whether `result` shows what `last` showed: the same experiment and options, and its scalars and tables the
    same as drawn (at the digits shown: a difference of float rounding below them moves nothing a person reads)."""
    def shown(r: Result) -> list:
        return [table_cells(r, key) for key in ["", *r.tables]]

    return (last is not None and result.experiment == last.experiment and result.options == last.options
            and shown(result) == shown(last))


def plot_lines(result: Result, key: str) -> list[Line]:
    return [Line(c.label, c.xs, c.ys) for c in result.plots[key].curves]


def table_cells(result: Result, key: str) -> tuple[list[str], list[list[str]]]:
    """A table's header and cells; key '' is the result's scalars as (result, value) rows."""
    if not key:
        return ["result", "value"], [[name, fmt(value)] for name, value in result.scalars.items()]
    table = result.tables[key]
    return [str(c) for c in table.columns], [[fmt(v) for v in row] for row in table.rows]


def stacked(columns: list[str]) -> tuple[list[str], int]:
    """Headers with their words stacked ("train\nloss"), and the header rows that takes: a column is as wide as its
    longest word or cell, so a sweep's runs table fits beside the list at 80 columns (its "val loss" column ran
    under the scrollbar, "2.3" of 2.329 with no mark: the long tier's crawl)."""
    labels = [column.replace(" ", "\n") for column in columns]
    return labels, max((label.count("\n") + 1 for label in labels), default=1)


def summary_lines(result: Result) -> list[str]:
    """The result's notes (the scalars are the 'results' figure)."""
    return list(result.notes)


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value != 0 else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ",".join(fmt(v) for v in value)
    return str(value)


def parse_sets(text: str) -> dict[str, str]:
    """'lora_rank=8; steps=40' -> {'lora_rank': '8', 'steps': '40'} (';' separates: values may hold commas)."""
    sets = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"options take name=value separated by ';', got {part.strip()!r}")
        name, value = part.split("=", 1)
        sets[name.strip()] = value.strip()
    return sets


def sweep_fields() -> list[str]:
    """Every field a sweep can turn: the model's axes and sizes, then the training knobs."""
    from tui_lab.config import AXES

    return [*[n for n in AXES if n != "family"], "layers", "d_model", "heads", "dropout", *SWEEP_TRAIN_FIELDS]


def sweep_values(field: str) -> str:
    """The values worth trying for `field`: every value of an axis, else a few around the default. A space after
    each comma: a field too narrow for them all ends in "…" after a whole value, never inside one (the crawler,
    issue 36: "…,sinusoidal…" at 80x24)."""
    from tui_lab.config import AXES

    if field in AXES:
        return ", ".join(str(v).lower() for v in AXES[field].values)
    return {"layers": "1, 2, 3", "d_model": "32, 64, 96", "heads": "1, 2, 4", "dropout": "0, 0.1, 0.2",
            "lr": "1e-3, 3e-3, 1e-2", "warmup": "0, 20, 60", "weight_decay": "0, 0.1",
            "batch_size": "8, 16, 32", "seq_len": "32, 64", "label_smoothing": "0, 0.1",
            "grad_clip": "0, 1"}.get(field, "")


def break_long_words(text: str, width: int) -> str:
    """`text` with each word wider than `width` broken after a separator ("=", "/", ",", ";", else "_"): a status
    line wraps at spaces only, and folded a word too long for it mid-name ("sinusoidal_halve" / "s" at 80x24,
    the crawler, issue 36)."""
    if width < 8:
        return text
    words = []
    for word in text.split(" "):
        while len(word) > width:
            cut = max(word.rfind(sep, 0, width) for sep in "=/,;")  # after a name, else inside one at "_"
            cut = cut if cut > 0 else word.rfind("_", 0, width)
            if cut <= 0:
                break
            words.append(word[: cut + 1] + "\n")
            word = word[cut + 1 :]
        words.append(word)
    return " ".join(words).replace("\n ", "\n")
