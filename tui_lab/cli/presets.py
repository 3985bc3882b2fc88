"""`tui-lab presets`: the preset names, their family, size and weights (random, or trained and shipped)."""

from __future__ import annotations

import argparse
import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui_lab.analysis.params import count_params
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
    console.print(_table(rows, wide=console.width >= WIDE))
    return 0


WIDE = 110  # below this the source goes under the name: a name is never cut (a person types it)


def _table(rows: list[dict], wide: bool) -> Table:
    """The name (what a person types after --preset) is never cut or wrapped; the source wraps instead."""
    name_width = max(len(row["name"]) for row in rows)
    table = Table(box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD)
    table.add_column("preset", no_wrap=wide, min_width=name_width, max_width=None if wide else name_width,
                     overflow="fold")
    table.add_column("family", no_wrap=True)
    table.add_column("parameters", justify="right", no_wrap=True)
    table.add_column("weights", no_wrap=True, min_width=len("trained"))
    if wide:
        table.add_column("source", ratio=1)
    for row in rows:
        cells = [row["name"], row["family"], f"{row['total_params']:,}", row["weights"]]
        if wide:
            table.add_row(*cells, row["source"])
        else:
            table.add_row(Text.assemble(row["name"], "\n", (row["source"], "dim")), *cells[1:])
    return table
