"""The Attention view's keys (`KEYS`, its bindings), its palette commands, and the hint line under its grid with
the keys the footer has no room for, fitted to the width.

The footer holds the pickers' keys beside f1..f7 and q quit at 80 columns; every other key of the view is named
here, shortest where the view is narrow. A key whose measurement does not apply to the live model is not named
(issue 36 item 11): pressed anyway, it says why in the info line.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.widgets import Static

from tui_lab.app.views.attention.head_detectors import applies
from tui_lab.app.views.attention.head_effects import effects_refused
from tui_lab.paths import exports_dir

FOOTER_ROOM = 90  # columns: the footer holds j's key beside the pickers', f1..f7, q and the palette's
WIDE = 100  # columns: the hint line names each key in words

# The footer has room for three keys beside f1..f7 and q quit at 80 columns: the pickers'. The hint line
# under the grid names #, z, m and e (and j there); the Run button names r.
KEYS = [
    Binding("e", "export", "export JSON", show=False),
    Binding("r", "run", "run", show=False),
    Binding("k", "cycle('kind')", "grid"),
    Binding("l", "cycle('layer')", "layer"),
    Binding("h", "cycle('head')", "head"),
    Binding("m", "model_view", "all heads", show=False),
    Binding("a", "ablate", "ablate heads", show=False),
    Binding("d", "attribute", "logit attribution", show=False),
    Binding("c", "inside_head", "inside one head", show=False),
    # the grid's own z and #, from anywhere in the view: the hint line names them while the focus is on a picker
    # or a button too (the long tier's walk: z named there and bound nowhere)
    Binding("z", "grid_density", "dense/full", show=False),
    Binding("number_sign", "grid_numbers", "# numbers", show=False),
    # j, the head detectors: one of three by `check_action`, on the footer where it has room, on the hint
    # line where it has not, and on a model the detectors do not cover off both, saying why when pressed
    Binding("j", "head_detectors", "head jobs"),
    Binding("j", "head_detectors_narrow", "head jobs", show=False),
    Binding("j", "head_detectors_refused", "head jobs", show=False),
]


class InfoLine(Static):
    """The line under the grid (`say`): the capture's note, the keys' hint, a refusal; `text` reads it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.text = ""

    def say(self, text: str) -> None:
        self.text = text
        self.update(text)


def hint(config: Any, gallery: bool, inside: bool, width: int, app_width: int, table: bool = False) -> str:
    """The hint for the model view (`gallery`), the inside-head pane (`inside`) or the grid, for a view `width`
    columns wide in an app `app_width` wide. Over the head detectors' `table` the grid's own # and z are not named:
    the grid is put away and the table does not take them (the pane's title names its keys)."""
    parts = _grid_keys(config, gallery, inside, width, app_width)
    if table:
        parts = [part for part in parts if part.split()[0] not in ("#", "z")]
    return " · ".join(part for part in parts if part)


def _grid_keys(config: Any, gallery: bool, inside: bool, width: int, app_width: int) -> list[str]:
    if gallery:  # ⏎ is off the footer, which keeps q quit
        return ["arrows or mouse: a tile", "⏎ open it full size", "m back to the grid"]
    if inside:  # at 80 columns each hint fits one line
        return ["arrows: query ↑↓, key ←→", "h head", "l layer", "c back to the grid"]
    ablate = "a ablate" if effects_refused("ablation", config) is None else ""
    if width < WIDE:  # DLA: direct logit attribution (the palette says it whole)
        dla = "d DLA" if effects_refused("attribution", config) is None else ""
        if app_width < FOOTER_ROOM and applies(config) is None:  # j off the footer: 76 wide
            parts = ["# values", "z dense", "m heads", "c inside", ablate, dla, "j jobs", "e JSON"]
        else:
            parts = ["# numbers", "z dense", "m heads", "c inside", ablate, dla, "e export"]
    else:
        dla = "d attribution" if effects_refused("attribution", config) is None else ""
        parts = ["arrows or mouse: a cell", "# numbers", "z dense", "m all heads", "c one head", ablate, dla,
                 "e export"]
    return parts


def j_binding(config: Any, app_width: int) -> str:
    """Which of j's three bindings (the view's BINDINGS) is live: the refusal on a model the detectors do not
    cover, else j on the footer where it has room, on the hint line where it has not."""
    if applies(config) is not None:
        return "head_detectors_refused"
    return "head_detectors" if app_width >= FOOTER_ROOM else "head_detectors_narrow"


def allows(action: str, parameters: tuple[object, ...], config: Any, app_width: int, pickers: Any,
           menu_open: bool, gallery: bool = False) -> bool | None:
    """The view's check_action: which of j's three bindings is the live one (see KEYS); l and h dimmed (None)
    while they would change nothing (`pickers` None while the view still composes), k too over the model view
    (`gallery`) of a model with one attention kind (it goes round the attention kinds there: the model view draws
    no mask), and the pickers' keys off the footer under an open menu."""
    if action == "cycle":
        if menu_open:
            return False
        if parameters != ("kind",) or gallery:
            which = str(parameters[0])
            return True if pickers is not None and pickers.can_cycle(which, attention_only=gallery) else None
    if not action.startswith("head_detectors"):
        return True
    return action == j_binding(config, app_width)


def palette(view: Any, heatmap: Any) -> list[tuple[str, str, Any]]:
    """The view's commands in the palette (ctrl+p), each with its key."""
    return [("Attention: run the capture", "r", view.action_run),
            ("Attention: export the grid", f"e: JSON in {exports_dir(create=False)}", view.action_export),
            ("Attention: next grid kind", "k", lambda: view.action_cycle("kind")),
            ("Attention: next layer", "l", lambda: view.action_cycle("layer")),
            ("Attention: next head", "h", lambda: view.action_cycle("head")),
            ("Attention: every layer x head (model view)", "m", view.action_model_view),
            ("Attention: each head's loss change when ablated", "a", view.action_ablate),
            ("Attention: each head's direct logit attribution", "d", view.action_attribute),
            ("Attention: each head's previous-token, duplicate and induction score", "j",
             view.action_head_detectors),
            ("Attention: inside one head (q·k, √d_k, mask, softmax, Σ p·v)", "c", view.action_inside_head),
            ("Attention: weights written in the cells", "#", heatmap.action_toggle_numbers),
            ("Attention: dense/full heatmap", "z", heatmap.action_toggle_density)]
