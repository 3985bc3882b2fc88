"""`tui-lab presets`: the preset names, their family, size and weights (random, or trained and shipped)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

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
    table = Table("preset", "family", "parameters", "weights", "source")
    for row in rows:
        table.add_row(row["name"], row["family"], f"{row['total_params']:,}", row["weights"], row["source"])
    Console().print(table)
    return 0
