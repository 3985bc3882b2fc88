"""Whether a select's menu is open where the keys go: its overlay has the focus, takes the letters to search and
names Esc ("Dismiss menu") on the footer, so a view's own keys leave the footer meanwhile (at 80 columns they
left no room: keys drawn over each other, q quit pushed off)."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Select


def menu_open(app: App) -> bool:
    focused = app.focused
    return focused is not None and isinstance(focused.parent, Select) and focused.parent.expanded
