"""`tui-lab presets`: the preset names, their family, size and weights (random, or trained and shipped)."""

from __future__ import annotations

import argparse
import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui_lab.analysis.params import count_params
from tui_lab.cli.layout import wrap
from tui_lab.presets import list_presets, load_preset, weights_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    rows = []
    for name in list_presets():
        config = load_preset(name)
        rows.append({"name": name, "family": config.family, "total_params": count_params(config).total,
                     "weights": weights_of(name), "source": config.source})
    if args.json:
        print(json.dumps({"presets": rows}))
        return 0
    console = Console()
    if _source_column_fits(rows, console.width):
        console.print(_table(rows))
    else:
        _print_rows(console, rows)
    return 0


COLUMNS = ("preset", "family", "parameters", "weights")


def _cells(row: dict) -> list[str]:
    return [row["name"], row["family"], f"{row['total_params']:,}", row["weights"]]


def _widths(rows: list[dict]) -> list[int]:
    return [max(len(c) for c in (name, *(_cells(r)[i] for r in rows))) for i, name in enumerate(COLUMNS)]


def _source_column_fits(rows: list[dict], width: int) -> bool:
    """The source as a fifth column only while its longest word fits in what the other four leave."""
    room = width - sum(_widths(rows)) - 3 * 5 - 1  # a space each side of each cell and a rule after it
    return max(len(word) for row in rows for word in row["source"].split()) <= room


def _table(rows: list[dict]) -> Table:
    """The name (what a person types after --preset) is never cut or wrapped; the source wraps instead."""
    table = Table(box=box.HEAVY_HEAD)
    table.add_column("preset", no_wrap=True)
    table.add_column("family", no_wrap=True)
    table.add_column("parameters", justify="right", no_wrap=True)
    table.add_column("weights", no_wrap=True)
    table.add_column("source", ratio=1)
    for row in rows:
        table.add_row(*_cells(row), row["source"])
    return table


def _print_rows(console: Console, rows: list[dict]) -> None:
    """Narrow: the four columns, and each preset's source under its row across the whole width, wrapped at
    spaces and after separators ("meta-llama/" / "Llama-2-7b-hf/config.json"), never mid-word."""
    widths = _widths(rows)

    def line(cells: list[str]) -> str:
        padded = (c.rjust(w) if i == 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded)

    console.print(Text(line(list(COLUMNS)).rstrip(), style="bold"))
    console.print(Text("─" * min(console.width, sum(widths) + 6)))
    indent = 4
    for row in rows:
        console.print(Text(line(_cells(row)).rstrip()))
        source = wrap(row["source"], console.width, indent, first=indent)
        console.print(Text("\n".join([" " * indent + source[0], *source[1:]]), style="dim"))
