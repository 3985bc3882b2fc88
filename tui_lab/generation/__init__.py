"""Generation: `generate` returns the ids, `stream` yields one `GenerationStep` per new token.

    from tui_lab.generation import generate, stream

- `settings`: `GenerationSettings` and its one check (no torch). `prompt`: text to prompt ids (no torch).
- `loop`: `generate`, `stream` and the `Generation` they run; `decoder_state`, `sampling`, `beam` its pieces.
- `session`: `complete`, the loop as the CLI and the app run it (timed, streamed, cancellable).

Names are imported on first use, so the torch-free modules stay torch-free to import (the app's first frame).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "generate": "tui_lab.generation.loop",
    "stream": "tui_lab.generation.loop",
    "GenerationStep": "tui_lab.generation.loop",
    "GenerationSettings": "tui_lab.generation.settings",
    "check_settings": "tui_lab.generation.settings",
    "complete": "tui_lab.generation.session",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tui_lab.generation' has no attribute {name!r}")
