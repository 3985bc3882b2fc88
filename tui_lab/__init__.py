"""tui-lab: a terminal lab for exploring Transformer architectures.

The headless core. Names that need torch are imported lazily, so `import tui_lab` stays instant and
the app can paint before torch has loaded.
"""

from __future__ import annotations

import importlib
from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.presets import list_presets, load_preset

_LAZY = {
    "build_model": "tui_lab.model",
    "Transformer": "tui_lab.model",
    "KVCache": "tui_lab.model",
    "generate": "tui_lab.generation",
    "load_hf": "tui_lab.hf",
    "hf_config": "tui_lab.hf",
    "load_hf_gpt2": "tui_lab.hf",
    "hf_gpt2_config": "tui_lab.hf",
    "export_hf_gpt2": "tui_lab.hf",
    "load_checkpoint": "tui_lab.checkpoint",
    "save_checkpoint": "tui_lab.checkpoint",
}

# `tui_lab.open(name)`: a model and its tokenizer with TransformerLens's calls (tui_lab/mechanism/lab.py).
_RENAMED = {"open": ("tui_lab.mechanism.lab", "open_lab"), "Lab": ("tui_lab.mechanism.lab", "Lab")}

# `open` stays out of __all__: a star import would hide the builtin.
__all__ = ["ModelConfig", "list_presets", "load_preset", *_LAZY, "Lab"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _RENAMED:
        module, attr = _RENAMED[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'tui_lab' has no attribute {name!r}")
