"""`tui-lab`: the app when called bare, the headless core's commands otherwise.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`.
Bad input is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "presets": ("tui_lab.cli.presets", "list the presets"),
    "info": ("tui_lab.cli.info", "architecture, shape trace and parameter counts of a config"),
    "train": ("tui_lab.cli.train", "train a model headless"),
    "generate": ("tui_lab.cli.generate", "generate text from a preset or checkpoint"),
    "bench": ("tui_lab.cli.bench", "measure cached vs uncached generation"),
    "export": ("tui_lab.cli.export", "export a checkpoint as a Hugging Face GPT-2 folder"),
}


class UsageError(ValueError):
    """Bad input from the command line: printed as one line, exit code 2."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help"):
        from tui_lab.cli.launch import launch

        return _guarded(lambda: launch(argv))
    name = argv[0] if argv[0] in COMMANDS else None
    parser = argparse.ArgumentParser(prog="tui-lab", description="A terminal lab for Transformers.")
    sub = parser.add_subparsers(dest="command")
    modules = {}
    for command, (module_name, help_text) in COMMANDS.items():
        if name not in (None, command):
            continue
        modules[command] = importlib.import_module(module_name)
        modules[command].add_arguments(sub.add_parser(command, help=help_text))
    args = parser.parse_args(argv)
    return _guarded(lambda: modules[args.command].run(args))


def _guarded(action) -> int:
    try:
        return int(action() or 0)
    except (UsageError, ValueError, FileNotFoundError) as err:
        print(f"tui-lab: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
