"""`tui-lab experiment list|run`: the seeds' lessons as runs (see `tui_lab.experiments`).

`run NAME [--quick] [--set option=value] [--json] [--export]`: with --json, JSON lines on stdout (progress
events, the last line `{"event": "result", ...}` with every result); otherwise a progress bar on stderr and
the scalars, tables and notes on stdout. Options are parsed before torch loads, so a bad name or value is
one line and exit code 2 at once. The first Ctrl-C cancels between steps (exit 130), a second interrupts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from tui_lab.cli import UsageError
from tui_lab.cli.interrupt import stop_on_interrupt
from tui_lab.run_control import RunControl


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the experiments, their lesson and options")
    listing.add_argument("--json", action="store_true", help="one JSON object")
    run = actions.add_parser("run", help="run one experiment")
    run.add_argument("name", metavar="NAME", help="an experiment (tui-lab experiment list)")
    run.add_argument("--quick", action="store_true", help="the small version: about two minutes or less on 2 cores")
    run.add_argument("--set", dest="sets", action="append", default=[], metavar="OPTION=VALUE",
                     help="an experiment option, e.g. --set lora_rank=8 (lists: --set widths=32,64)")
    run.add_argument("--json", action="store_true", help="JSON lines, the last one holds the results")
    run.add_argument("--export", action="store_true", help="also write the results as JSON and CSV to the exports "
                                                           "folder (TUI_LAB_EXPORTS, else ~/tui-lab/exports)")


def run(args: argparse.Namespace) -> int:
    from tui_lab.experiments import registry

    if args.action == "list":
        return _list(registry.experiments(), args.json)
    experiment = registry.get(args.name)
    options = experiment.resolve(args.quick, _sets(args.sets))
    control = RunControl()
    with stop_on_interrupt(control):  # first Ctrl-C: cancel between steps
        return _run(experiment, options, control, args)


def _sets(items: list[str]) -> dict[str, str]:
    sets = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--set takes OPTION=VALUE, got {item!r}")
        name, text = item.split("=", 1)
        sets[name.strip()] = text
    return sets


def _list(experiments: list, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"experiments": [e.describe() for e in experiments]}))
        return 0
    from rich.console import Console

    from tui_lab.cli.layout import wrap

    console = Console(highlight=False, markup=False)
    width = console.width if console.is_terminal else 10**6  # a pipe keeps each text on one line
    column = min(max(len(e.name) for e in experiments), NAME_COLUMN) + 2
    for e in experiments:
        options = ", ".join(f"{k}={_text(v)}" for k, v in e.options.items())
        name = e.name.ljust(column) if len(e.name) < column else e.name + "\n" + " " * column
        lines = wrap(e.title, width, column, first=column)
        for text, hang in ((e.lesson, 0), (f"options: {options}", 2)):  # options: their lines under the first's
            lines += [" " * column + line if i == 0 else line
                      for i, line in enumerate(wrap(text, width, column + hang, first=column))]
        console.print(name + "\n".join(lines) + "\n", soft_wrap=True)
    return 0


NAME_COLUMN = 24  # a longer name stands on its own line, its text below it at this indent


def _run(experiment, options: dict[str, Any], control: RunControl, args: argparse.Namespace) -> int:
    from tui_lab.experiments import Cancelled

    progress = JsonProgress() if args.json else BarProgress()
    try:
        with progress:
            result = experiment.run(options, progress, lambda: control.stopped)
    except Cancelled as err:
        print(f"tui-lab: {err}", file=sys.stderr)
        return 130
    exported = [str(p) for p in result.export()] if args.export else []
    if args.json:
        print(json.dumps({"event": "result", **result.to_dict(), "exported": exported}))
    else:
        _print_result(result, exported)
    return 0


class JsonProgress:
    """Progress as JSON lines, at most a few a second (a fast run would otherwise print thousands)."""

    def __init__(self) -> None:
        self._last = 0.0

    def __enter__(self) -> JsonProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def __call__(self, fraction: float, message: str, partial: Any = None) -> None:
        now = time.monotonic()
        if now - self._last >= 0.5 and fraction < 1.0:
            self._last = now
            print(json.dumps({"event": "progress", "fraction": round(fraction, 4), "message": message}), flush=True)


class BarProgress:
    """A rich progress bar on stderr (stdout keeps the results)."""

    def __enter__(self) -> BarProgress:
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task("starting", total=1.0)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._bar.__exit__(*exc)

    def __call__(self, fraction: float, message: str, partial: Any = None) -> None:
        self._bar.update(self._task, completed=fraction, description=message[:60])


def _print_result(result, exported: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    scalars = Table(title=f"{result.experiment} ({result.seconds:.1f} s)")
    scalars.add_column("result")
    scalars.add_column("value", justify="right")
    for name, value in result.scalars.items():
        scalars.add_row(name, _text(value))
    console.print(scalars)
    for table in result.tables.values():
        shown = Table(title=table.title)
        for column in table.columns:
            shown.add_column(str(column), justify="right")
        for row in table.rows:
            shown.add_row(*(_text(v) for v in row))
        console.print(shown)
    for note in result.notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    for path in exported:
        console.print(f"exported: {path}", markup=False, highlight=False, soft_wrap=True)


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (tuple, list)):
        return ",".join(_text(v) for v in value)
    return str(value)


