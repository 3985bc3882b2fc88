"""A served session keeps its live model and its run when it closes (idle timeout, closed tab, server stopped).

The live model: the app saves it to `<session folder>/autosave` on its way out, so the person's reload (same URL,
same folder) finds it. The run: its trainer process keeps a resumable checkpoint in `<session folder>/kept-run` as
it goes, every KEEP_EVERY_S (`TUI_LAB_KEEP_EVERY_S` to change it), and once more when it is stopped
(tui_lab/train/keep.py); the app started again for the session says where it is (`kept_run_note`).

Only in a served session (`tui_lab.served`): a terminal app quits as the person asked. A random preset has no
tokenizer and nothing learned: nothing to keep. A failure is logged, never raised: the app is exiting anyway.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

from tui_lab.served import ServedPolicy
from tui_lab.train.keep import KEEP_EVERY_S, KEPT, kept_note

AUTOSAVE = "autosave"
KEEP_EVERY_ENV = "TUI_LAB_KEEP_EVERY_S"
log = logging.getLogger("tui_lab.app")


def autosave(live: Any) -> Path | None:
    policy = ServedPolicy.from_env()
    if policy is None or live.model is None or live.tokenizer is None:
        return None
    from tui_lab.checkpoint import checkpoint_bytes, save_checkpoint

    try:
        policy.check_quota(checkpoint_bytes(live.model), "the autosave")
        return save_checkpoint(policy.home / AUTOSAVE, live.model, live.tokenizer,
                               meta={"origin": live.origin, "autosave": True})
    except Exception as err:  # noqa: BLE001 - the session is closing: say it in the log, lose nothing else
        log.warning("autosave failed: %s", err)
        return None


def run_keeping() -> dict[str, Any]:
    """The TrainerSpec fields that make a served session's run keep itself in `kept-run/` ({} in a terminal app)."""
    policy = ServedPolicy.from_env()
    if policy is None:
        return {}
    return {"keep": str(policy.home / KEPT), "keep_every_s": keep_every_s(), "keep_room": policy.check_quota}


def keep_every_s() -> float:
    """The interval between kept checkpoints: KEEP_EVERY_S unless `TUI_LAB_KEEP_EVERY_S` names another (> 0)."""
    try:
        value = float(os.environ.get(KEEP_EVERY_ENV, ""))
    except ValueError:
        return KEEP_EVERY_S
    return value if value > 0 and math.isfinite(value) else KEEP_EVERY_S


def kept_run_note() -> str | None:
    """A served session's next visit: where its last run was kept, if one was."""
    policy = ServedPolicy.from_env()
    return kept_note(policy.home / KEPT, KEPT) if policy is not None else None
