"""Before a long run: the estimate, and start or cancel."""

from __future__ import annotations

from tui_lab.app.modals.confirm import Confirm


class ConfirmLongRun(Confirm):
    """Dismisses True (start) or False (cancel)."""

    YES = "Start (y)"
    IDS = ("confirm-text", "confirm-start", "confirm-cancel")
