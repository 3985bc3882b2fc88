"""Where the keys go when a view opens: its home widget, never a text field (issue 23).

A view opens with focus on the widget its keys act on (`home()`: the grid, the completion, the Train
controls; the view itself when its keys are the view's own). Its footer then names its keys and every
one acts at once. Tab or `i` enters a field (`first_field()`, by default the first text box shown);
while a field has focus every letter types; Esc goes back home.
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Input, Select, Switch

FIELDS = (Input, Select, Switch)


def home_of(view: Widget) -> Widget | None:
    """None while the view's own widgets are still being composed (it is focused again after the refresh)."""
    home = getattr(view, "home", None)
    try:
        return home() if home is not None else (view if view.can_focus else None)
    except NoMatches:
        return None


def first_field_of(view: Widget) -> Widget | None:
    first = getattr(view, "first_field", None)
    try:
        return first() if first is not None else next((w for w in view.query(Input) if _shown(w, view)), None)
    except NoMatches:
        return None


def _shown(widget: Widget, view: Widget) -> bool:
    """Focusable and displayed, with every container up to the view: `focusable` alone passed Train's hidden
    file box (display: none while the corpus is built-in), so `i` typed into a field nobody could see."""
    if not widget.focusable:
        return False
    node: Widget | None = widget
    while node is not None and node is not view:
        if not node.display:
            return False
        node = node.parent if isinstance(node.parent, Widget) else None
    return True


def in_field(widget: Widget | None) -> bool:
    return isinstance(widget, FIELDS) or any(isinstance(a, FIELDS) for a in getattr(widget, "ancestors", []))
