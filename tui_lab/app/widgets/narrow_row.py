"""A row of fields that stacks on a narrow terminal: it carries the class `-narrow` below NARROW_BELOW columns.

The row looks at the terminal's width when it mounts, and the App sets its class on a resize, so a
resize across the width restyles the row and its few children only. The class used to sit on the views' tabs,
and a resize across 82 columns restyled all ~670 widgets of the seven views (~0.4 s of CPU a resize).
"""

from __future__ import annotations

from textual.containers import Horizontal

# Below this many columns the tab labels lose their padding too (app.py TABS_WIDTH; a test keeps them equal).
NARROW_BELOW = 82


class NarrowRow(Horizontal):
    def on_mount(self) -> None:  # the App sets the class on a resize
        self.set_class(self.app.size.width < NARROW_BELOW, "-narrow")
