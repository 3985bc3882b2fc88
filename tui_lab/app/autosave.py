"""A served session keeps its live model when it closes (idle timeout, closed tab, server stopped): the app saves
it to `<session folder>/autosave` on its way out, so the person's reload (same URL, same folder) finds it.

Only in a served session (`tui_lab.served`): a terminal app quits as the person asked. A random preset has no
tokenizer and nothing learned: nothing to keep. A failure is logged, never raised: the app is exiting anyway.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tui_lab.served import ServedPolicy

AUTOSAVE = "autosave"
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
