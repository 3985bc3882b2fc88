"""Trained checkpoints that ship inside the package, one folder each, named like the preset they are.

A shipped toy is a preset with trained weights: `tui_lab.presets` lists it and `load_preset(name)` gives
its config, and `shipped_checkpoint(name)` says where its weights are (None for a preset without any).
Each folder is an ordinary checkpoint (`tui_lab/checkpoint/`: config.json, model.safetensors,
tokenizer/, meta.json) without the optimizer state, so it stays small; `meta.json` says how it was made
(`benchmarks/tools/make_shipped_toys.py`), what it scored and which learned pattern the tour can point at.

Pure file reads: nothing here imports torch, so listing presets stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_lab.checkpoint_files import is_checkpoint

SHIPPED_DIR = Path(__file__).parent


def shipped_names() -> list[str]:
    """Names of the shipped trained toys, sorted."""
    return sorted(p.name for p in SHIPPED_DIR.iterdir() if is_checkpoint(p))


def shipped_checkpoint(name: str) -> Path | None:
    """The checkpoint folder of preset `name` if it carries trained weights, else None."""
    folder = SHIPPED_DIR / name
    return folder if name and "/" not in name and is_checkpoint(folder) else None


def shipped_config_data(name: str) -> dict[str, Any]:
    """The ModelConfig fields (config.json) of shipped toy `name`."""
    return _read(name, "config.json")


def shipped_meta(name: str) -> dict[str, Any]:
    """How shipped toy `name` was made and what it learned (meta.json; see the module docstring)."""
    return _read(name, "meta.json")


def _read(name: str, file: str) -> dict[str, Any]:
    folder = shipped_checkpoint(name)
    if folder is None:
        raise ValueError(f"preset {name!r} has no shipped weights; shipped: {', '.join(shipped_names())}")
    return json.loads((folder / file).read_text(encoding="utf-8"))
