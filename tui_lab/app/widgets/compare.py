"""Two configs side by side (seed 000's table: 2017 base vs GPT-2 small), differences highlighted."""

from __future__ import annotations

from rich.table import Table

from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig, field_names

SKIP = ("name", "source", "norm_eps")


def compare_rows(a: ModelConfig, b: ModelConfig) -> list[tuple[str, str, str, bool]]:
    """(field, value in a, value in b, differs) for every field, plus the exact parameter count."""
    rows = []
    for name in field_names():
        if name in SKIP:
            continue
        va, vb = getattr(a, name), getattr(b, name)
        rows.append((name, _show(va), _show(vb), va != vb))
    ta, tb = count_params(a).total, count_params(b).total
    rows.append(("parameters", f"{ta:,}", f"{tb:,}", ta != tb))
    return rows


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def compare_table(a: ModelConfig, b: ModelConfig, title_a: str, title_b: str) -> Table:
    table = Table(title="differences highlighted", title_style="dim", expand=False)
    table.add_column("field")
    table.add_column(title_a, justify="right")
    table.add_column(title_b, justify="right")
    for name, va, vb, differs in compare_rows(a, b):
        style = "bold yellow" if differs else "dim"
        table.add_row(("≠ " if differs else "  ") + name, va, vb, style=style)
    return table
