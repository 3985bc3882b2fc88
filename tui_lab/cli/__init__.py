"""`tui-lab`: the app when called bare, the headless core's commands otherwise.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`.
Bad input is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMANDS = {
    "presets": ("tui_lab.cli.presets", "list the presets"),
    "info": ("tui_lab.cli.info", "architecture, shape trace and parameter counts of a config"),
    "train": ("tui_lab.cli.train", "train a model headless"),
    "generate": ("tui_lab.cli.generate", "generate text from a preset or checkpoint"),
    "bench": ("tui_lab.cli.bench", "measure cached vs uncached generation"),
    "export": ("tui_lab.cli.export", "export a checkpoint as a Hugging Face GPT-2 folder"),
    "serve": ("tui_lab.cli.serve", "serve the app in a web browser"),
}


class UsageError(ValueError):
    """Bad input from the command line: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line (our format) instead of usage + message."""

    def error(self, message: str):
        raise UsageError(message)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help"):
        from tui_lab.cli.launch import launch

        return _guarded(lambda: launch(argv))
    name = argv[0] if argv[0] in COMMANDS else None
    parser = Parser(prog="tui-lab", description="A terminal lab for Transformers.")
    sub = parser.add_subparsers(dest="command")
    modules = {}
    for command, (module_name, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(command, help=help_text)
        if command == name:  # import only the command asked for: some import torch
            modules[command] = importlib.import_module(module_name)
            modules[command].add_arguments(command_parser)

    def parse_and_run() -> int:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return modules[args.command].run(args)

    return _guarded(parse_and_run)


def _guarded(action) -> int:
    try:
        return int(action() or 0)
    except (UsageError, ValueError, FileNotFoundError) as err:
        print(f"tui-lab: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`tui-lab ... | head`): stop quietly, as a shell tool does on SIGPIPE.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
