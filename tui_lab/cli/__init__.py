"""`tui-lab`: the app when called bare, the headless core's commands otherwise.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`.
Bad input is one line on stderr and exit code 2, never a traceback. `tui-lab --help` shows the app's
options and the commands together; a word that is not a command is refused (with the nearest command
when it is a near miss), never handed to the app as if it were an option.
"""

from __future__ import annotations

import argparse
import difflib
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
    "experiment": ("tui_lab.cli.experiment", "list or run the experiments (the seeds' lessons as runs)"),
    "lens": ("tui_lab.cli.lens", "logit lens: each layer's top tokens per position"),
    "ablate": ("tui_lab.cli.ablate", "ablate each attention head: how the loss moves"),
    "patch": ("tui_lab.cli.patch", "activation patching: where the answer is carried"),
    "attribute": ("tui_lab.cli.attribute", "direct logit attribution per head, composition scores"),
    "heads": ("tui_lab.cli.heads", "head detectors: previous-token, duplicate, induction"),
}

# The Hugging Face model types --from-hf opens (tui_lab.hf.families.FAMILIES, kept equal by
# tests/cli/test_cli_words.py): written out here so that --help imports nothing of the loaders.
HF_MODEL_TYPES = ("gpt2", "llama", "mistral", "qwen2", "mixtral", "marian", "bert", "vit", "t5")


class UsageError(ValueError):
    """Bad input from the command line: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line (our format) instead of usage + message."""

    def error(self, message: str):
        raise UsageError(message)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        return _guarded(lambda: _parser(None).print_help())
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return _guarded(lambda: _unknown_command(argv[0]))
    if not argv or argv[0] not in COMMANDS:
        from tui_lab.cli.launch import launch

        return _guarded(lambda: launch(argv))
    name = argv[0]
    parser, modules = _parser(name), {}
    modules[name] = importlib.import_module(COMMANDS[name][0])  # only the command asked for: some import torch
    modules[name].add_arguments(parser.command_parsers[name])

    def parse_and_run() -> int:
        args = parser.parse_args(argv)
        return modules[args.command].run(args)

    return _guarded(parse_and_run)


# The labels of tui_lab.hf.families.FAMILIES, written out so the help imports nothing (a test keeps them equal).
HF_FAMILIES = ("GPT-2", "Llama", "Mistral", "Qwen2", "Mixtral", "Marian", "BERT", "ViT", "T5")


def _parser(name: str | None) -> Parser:
    """The commands' parser; for the help (`name` None) it lists the app's own options too."""
    parser = Parser(prog="tui-lab", usage="tui-lab [APP OPTIONS]  |  tui-lab COMMAND [OPTIONS]",
                    description="A terminal lab for Transformers. Without a command it opens the app; "
                                "`tui-lab COMMAND --help` describes a command's options. --from-hf opens Hugging "
                                f"Face models of {len(HF_FAMILIES)} families: {', '.join(HF_FAMILIES[:-1])} and "
                                f"{HF_FAMILIES[-1]}.")
    if name is None:  # shown, never parsed here: the app parses them itself (cli/launch.py)
        from tui_lab.cli.launch import add_app_arguments

        add_app_arguments(parser.add_argument_group("app options (tui-lab without a command)"))
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    parser.command_parsers = {command: sub.add_parser(command, help=help_text, prog=f"tui-lab {command}")
                              for command, (_, help_text) in COMMANDS.items()}
    return parser


def _unknown_command(word: str) -> int:
    """A bare word is never an app option: name the command it was probably meant to be."""
    prefixed = [c for c in COMMANDS if len(word) >= 2 and c.startswith(word)]
    near = prefixed if len(prefixed) == 1 else difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    if near:
        raise UsageError(f"unknown command {word!r}; did you mean {near[0]!r}?")
    raise UsageError(f"unknown command {word!r}; the commands are {', '.join(COMMANDS)} "
                     "(tui-lab --help lists them and the app's options)")


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
