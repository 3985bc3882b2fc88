"""Before Apply replaces learned weights: say what is lost, then Apply anyway or Cancel."""

from __future__ import annotations

from tui_lab.app.modals.confirm import Confirm


def apply_warning(origin_text: str, shipped: str | None = None) -> str:
    """`shipped`: the form names an unedited shipped toy, so Apply loads its weights rather than random ones."""
    after = f"the shipped toy {shipped}'s trained weights" if shipped else "random weights"
    return (f"The live model holds {origin_text}.\n"
            f"Apply builds a new model from the form with {after}: what this one learned is not carried "
            "over. To keep it, cancel and save it first (w in the Train view).")


class ConfirmApply(Confirm):
    """Dismisses True (apply anyway) or False (cancel: the live model stays)."""

    YES = "Apply anyway (y)"
    IDS = ("apply-warning", "apply-anyway", "apply-cancel")

    def __init__(self, origin_text: str, shipped: str | None = None) -> None:
        super().__init__(apply_warning(origin_text, shipped))
