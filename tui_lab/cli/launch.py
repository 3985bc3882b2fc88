"""`tui-lab` with no subcommand: parse the launch flags and run the Textual app.

Torch is never imported here: the first frame paints from the config alone and the live model is built
in a worker. Checks that need no torch (preset name, device shape, folders) fail before the app starts.
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

from tui_lab.cli import HF_MODEL_TYPES, Parser, UsageError
from tui_lab.openmp import configure_openmp

# The shipped trained English toy (tui_lab/shipped/): the first look at attention and generation shows
# something learned; `--preset gpt2-toy` is the same shape with random weights.
DEFAULT_PRESET = "gpt2-toy-english"


def parser() -> argparse.ArgumentParser:
    # Parser: a bad flag is one line naming it (exit 2), not argparse's usage block.
    p = Parser(prog="tui-lab", description="A terminal lab for Transformers (the app).")
    add_app_arguments(p)
    return p


def add_app_arguments(p) -> None:
    """The app's own options; `tui-lab --help` shows them beside the commands (cli/__init__.py)."""
    p.add_argument("--preset", default=None, help=f"preset to open (default {DEFAULT_PRESET}; tui-lab presets "
                                                  "lists them)")
    p.add_argument("--checkpoint", metavar="DIR", help="open a checkpoint folder saved by tui-lab")
    p.add_argument("--from-hf", metavar="ID|DIR",
                   help=f"open a Hugging Face model folder or id (model types {', '.join(HF_MODEL_TYPES)}; e.g. "
                        "gpt2); an id not in the local cache shows its files and size and asks before downloading")
    p.add_argument("--download", action="store_true", help="with --from-hf ID: download without asking (the file "
                                                           "list and progress still show)")
    p.add_argument("--allow-pickle", dest="allow_pickle", action="store_true",
                   help="with --from-hf ID: accept weights that exist only as pytorch_model.bin (read with "
                        "weights_only)")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default cpu)")
    p.add_argument("--train", action="store_true", help="open the Train view with training running on the model")


def _checked(args: argparse.Namespace):
    from tui_lab.devices import device_problem
    from tui_lab.presets import load_preset

    sources = [flag for flag, value in (("--preset", args.preset), ("--checkpoint", args.checkpoint),
                                        ("--from-hf", args.from_hf)) if value]
    if len(sources) > 1:
        raise UsageError(f"choose one of {', '.join(sources)}")
    problem = device_problem(args.device, field="--device")
    if problem:
        raise UsageError(problem)
    if args.checkpoint and not Path(args.checkpoint).is_dir():
        raise UsageError(f"--checkpoint ({args.checkpoint!r}) is not a folder")
    _check_from_hf(args)
    # A checkpoint or HF folder replaces this config once loaded; the preset paints the first frame.
    return load_preset(args.preset or DEFAULT_PRESET)


def _check_from_hf(args: argparse.Namespace) -> None:
    """What can be refused without the network: not a folder nor an id, a bad folder, offline and uncached."""
    for flag, name in (("--download", "download"), ("--allow-pickle", "allow_pickle")):
        if getattr(args, name, False) and not args.from_hf:  # serve builds its Namespace from the same parser
            raise UsageError(f"{flag} only goes with --from-hf (a Hugging Face model id to fetch)")
    if not args.from_hf:
        return
    from tui_lab.hf.hub import locate, refuse_offline  # only with --from-hf: not on the first frame's path

    try:
        if locate(args.from_hf) is None:
            refuse_offline(args.from_hf)  # the app would only fail in its modal: say it here, in one line
    except ValueError as err:
        raise UsageError(str(err)) from None


def make_app(argv: list[str], build: bool = True):
    """The configured app, not yet running (tests and benchmarks drive it with `run_test`).

    `build=False` paints without building the live model (tests of big presets' arithmetic)."""
    args = parser().parse_args(argv)
    config = _checked(args)
    from tui_lab.app.app import TuiLabApp

    # Bare `tui-lab` opens on the Tour's first page (the form is F1 away); a model asked for opens on its form.
    asked = args.preset or args.checkpoint or args.from_hf or args.train
    app = TuiLabApp(config, device=args.device, checkpoint=args.checkpoint, from_hf=args.from_hf, build=build,
                    first_view="architecture" if asked else "tour")
    app.train_on_start = args.train  # read by the Train view when it mounts
    app.hf_options = {"download": args.download, "allow_pickle": args.allow_pickle}
    return app


def launch(argv: list[str]) -> int:
    # Before anything imports torch: idle OpenMP threads spin only briefly, so they do not starve the
    # UI thread (REFERENCE: in-app throughput collapsed with spinning workers; see tui_lab/openmp.py).
    configure_openmp()
    app = make_app(argv)
    quiet_collector()
    app.run()
    return int(app.return_code or 0)


def quiet_collector() -> None:
    """The garbage collector out of the first keys' way. What is loaded by now (the app's modules, Textual, Rich:
    ~200k objects) lives as long as the process, yet every full collection walked it: two of them fell between
    the first frame and the first keys' effect, ~0.15 and ~0.3 s of the event loop beside a busy CPU (measured in
    tmux with gc.callbacks; benchmarks/interface/first_keys.py). Frozen, the collector no longer looks at it;
    young collections every 10k new objects, not 700, run ~15x less often (the test suite does the same,
    tests/conftest.py). Only for the launched app: a test process runs many apps and freezes once, itself."""
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
