"""The config flags shared by `info`, `train` and `generate`: a preset, the five shortcuts, `--set`."""

from __future__ import annotations

import argparse

from tui_lab.config import ModelConfig, parse_value
from tui_lab.presets import load_preset

SHORTCUT_FLAGS = {
    "layers": "--layers", "d_model": "--d-model", "heads": "--heads", "d_ff": "--d-ff", "vocab": "--vocab",
}


def add_config_arguments(parser: argparse.ArgumentParser, preset_default: str | None = "gpt2-toy") -> None:
    parser.add_argument("--preset", default=preset_default, help="preset name (see `tui-lab presets`)")
    for field, flag in SHORTCUT_FLAGS.items():
        parser.add_argument(flag, dest=field, type=int, default=None, metavar="N")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE",
                        help="any config field, e.g. --set positions=rope --set dropout=0")


def overrides_from_args(args: argparse.Namespace) -> dict:
    overrides = {f: getattr(args, f) for f in SHORTCUT_FLAGS if getattr(args, f, None) is not None}
    for item in getattr(args, "sets", []):
        if "=" not in item:
            raise ValueError(f"--set takes FIELD=VALUE, got {item!r}")
        name, text = item.split("=", 1)
        overrides[name.strip()] = parse_value(name.strip(), text)
    return overrides


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    return load_preset(args.preset, **overrides_from_args(args))
