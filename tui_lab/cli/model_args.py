"""The model flags `tui-lab generate` and `tui-lab bench generate` share, the model they name, and the
`--download` / `--allow-pickle` pair every command with `--from-hf` takes (`hub_options` turns them into
what `tui_lab.hf.hub.resolve` wants: the plan's size and a progress line on stderr, Ctrl-C as a clean stop).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tui_lab.cli import HF_MODEL_TYPES
from tui_lab.cli.interrupt import on_sigint
from tui_lab.devices import pick_device
from tui_lab.generation.settings import SEED_LIMIT
from tui_lab.loading import LoadedModel, load_model

FROM_HF_HELP = (f"a Hugging Face folder, cache root or model id (model types {', '.join(HF_MODEL_TYPES)}; "
                "e.g. distilgpt2); an id not in the local cache needs --download")
PROGRESS_EVERY_S = 0.2  # a terminal's progress line is redrawn at most this often


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """`--preset NAME | --checkpoint DIR | --from-hf ID` and `--device`, shared with `tui-lab bench generate`."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="preset name, random weights (see `tui-lab presets`)")
    source.add_argument("--checkpoint", metavar="DIR", help="a checkpoint folder written by `tui-lab train`")
    source.add_argument("--from-hf", dest="from_hf", metavar="ID|DIR", help=FROM_HF_HELP)
    add_hub_arguments(parser)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto (default: cpu)")
    parser.add_argument("--seed", type=int, default=0, help="seeds random weights and sampling (default: 0)")


def add_hub_arguments(parser: Any) -> None:
    """`--download` and `--allow-pickle`, beside `--from-hf` on every command that has it."""
    parser.add_argument("--download", action="store_true",
                        help="with --from-hf ID: fetch the model from the Hugging Face Hub when it is not in the "
                             "local cache (config, safetensors weights, tokenizer; the size is printed first)")
    parser.add_argument("--allow-pickle", dest="allow_pickle", action="store_true",
                        help="with --download: accept weights that exist only as pytorch_model.bin (still read "
                             "with weights_only, which runs no code)")


def check_hub_arguments(args: argparse.Namespace) -> None:
    """--download and --allow-pickle say how to get a --from-hf model: alone they would be silently ignored."""
    for flag, name in (("--download", "download"), ("--allow-pickle", "allow_pickle")):
        if getattr(args, name, False) and not getattr(args, "from_hf", None):
            raise ValueError(f"{flag} only goes with --from-hf (a Hugging Face model id to fetch)")


def load_from_args(args: argparse.Namespace) -> LoadedModel:
    """The model and its codec from `--preset`, `--checkpoint` or `--from-hf` (see `tui_lab.loading`)."""
    check_hub_arguments(args)
    if not 0 <= args.seed < SEED_LIMIT:
        raise ValueError(f"--seed ({args.seed}) must be an integer from 0 to 2**63 - 1")
    device = pick_device(args.device, field="--device")
    if getattr(args, "from_hf", None) is not None:
        with hub_options(args) as options:
            return load_model("hf", args.from_hf, device, **options)
    if args.checkpoint is not None:
        return load_model("checkpoint", args.checkpoint, device)
    return load_model("preset", args.preset, device, seed=args.seed)


@contextmanager
def hub_options(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """`resolve`'s options for a command line: consent from --download, the plan and progress on stderr
    (stdout stays the command's own, `--json` clean), and a first Ctrl-C that stops the download cleanly."""
    stop = threading.Event()
    printer = _ProgressPrinter()
    options = dict(download=args.download, allow_pickle=args.allow_pickle, on_plan=printer.plan,
                   on_progress=printer.progress, should_stop=stop.is_set)
    from tui_lab.hf.hub import DownloadCancelled

    try:
        with _first_interrupt_sets(stop, printer):
            yield options
    except DownloadCancelled as err:
        printer.finish()
        print(f"tui-lab: {err}", file=sys.stderr)
        raise KeyboardInterrupt from None  # the CLI's exit code for Ctrl-C (130)
    finally:
        printer.finish()


@contextmanager
def _first_interrupt_sets(stop: threading.Event, printer: _ProgressPrinter) -> Iterator[None]:
    """During a download Ctrl-C sets `stop` (it ends after the chunk in flight, finished files kept); a second
    Ctrl-C, or one before or after the download, interrupts at once as usual. Off the main thread there is no
    handler: a caller there stops with should_stop."""

    def handler(signum, frame) -> None:
        if stop.is_set() or not printer.downloading:
            raise KeyboardInterrupt
        stop.set()

    with on_sigint(handler):
        yield


class _ProgressPrinter:
    """The plan's one-line summary, then progress on stderr: one redrawn line on a terminal, else a line per file."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last, self.open_line, self.files_done, self.downloading = 0.0, False, 0, False

    def plan(self, plan) -> None:
        self.downloading = True
        print(f"downloading {plan.summary()}", file=sys.stderr, flush=True)

    def progress(self, p) -> None:
        self.downloading = p.files_done < p.files_total
        if self.tty:
            now = time.monotonic()
            if now - self.last >= PROGRESS_EVERY_S or p.files_done == p.files_total:
                self.last, self.open_line = now, True
                print(f"\r\x1b[K{p.line()}", end="", file=sys.stderr, flush=True)
        elif p.files_done > self.files_done:  # a log or a pipe: no carriage returns, one line per finished file
            self.files_done = p.files_done
            print(p.line(), file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.open_line:
            self.open_line = False
            print(file=sys.stderr, flush=True)
