"""Two configs side by side (seed 000's table: 2017 base vs GPT-2 small), differences highlighted.

The exact parameter counts come first, one line each, so a narrow panel (80 columns) shows them whole;
the field table below may wrap its values.
"""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

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


def compare_table(a: ModelConfig, b: ModelConfig, title_a: str, title_b: str) -> Group:
    rows = compare_rows(a, b)
    _, pa, pb, _ = rows[-1]
    width = max(len(title_a), len(title_b))
    counts = Text.assemble("parameters\n", ("A ", "bold"), f"{title_a:<{width}} ", (f"{pa:>11}", "bold"), "\n",
                           ("B ", "bold"), f"{title_b:<{width}} ", (f"{pb:>11}", "bold"))
    table = Table(title="differences highlighted", title_style="dim", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, expand=False)
    table.add_column("field", no_wrap=True)
    table.add_column("A", justify="right", overflow="fold")
    table.add_column("B", justify="right", overflow="fold")
    for name, va, vb, differs in rows:
        style = "bold yellow" if differs else "dim"
        table.add_row(("≠ " if differs else "  ") + name, va, vb, style=style)
    return Group(counts, table)
