"""The model flags `tui-lab generate` and `tui-lab bench generate` share, and the model they name."""

from __future__ import annotations

import argparse

from tui_lab.devices import pick_device
from tui_lab.loading import LoadedModel, load_model


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """`--preset NAME | --checkpoint DIR | --from-hf DIR` and `--device`, shared with `tui-lab bench generate`."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="preset name, random weights (see `tui-lab presets`)")
    source.add_argument("--checkpoint", metavar="DIR", help="a checkpoint folder written by `tui-lab train`")
    source.add_argument("--from-hf", dest="from_hf", metavar="DIR",
                        help="a Hugging Face GPT-2 folder or cache root (read locally, never downloaded)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto (default: cpu)")
    parser.add_argument("--seed", type=int, default=0, help="seeds random weights and sampling (default: 0)")


def load_from_args(args: argparse.Namespace) -> LoadedModel:
    """The model and its codec from `--preset`, `--checkpoint` or `--from-hf` (see `tui_lab.loading`)."""
    device = pick_device(args.device, field="--device")
    if getattr(args, "from_hf", None) is not None:
        return load_model("hf", args.from_hf, device)
    if args.checkpoint is not None:
        return load_model("checkpoint", args.checkpoint, device)
    return load_model("preset", args.preset, device, seed=args.seed)
