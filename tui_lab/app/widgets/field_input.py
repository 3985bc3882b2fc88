"""An Input whose keystrokes repaint the field only, not the whole screen.

Textual's Input sets its `virtual_size` to the text's width on every change, and `virtual_size` is declared
with `layout=True`; the next layout sets it back to the field's width. So each key laid out every widget on
the screen (~80 on the Train view): ~12 ms of the UI thread per key on this 2-core machine, taken from a
training run sharing the cores (benchmarks/ui_latency.py). Our fields have fixed widths, so the text's width
never changes the layout: declaring the reactive without `layout` halves the cost per key (~6 ms). A field
sized `width: auto` still lays out on each change, because Input asks for that itself.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class FieldInput(Input):
    """Input for a fixed-width form field."""

    virtual_size = Reactive(Size(0, 0), repaint=True, layout=False)

    def on_mount(self) -> None:
        # A run training when this field mounts keeps its cursor still, as it did every field on screen then
        # (the Train view's monitor sets the app's `fields_blink`; an app of other making has none).
        self.cursor_blink = getattr(self.app, "fields_blink", True)
