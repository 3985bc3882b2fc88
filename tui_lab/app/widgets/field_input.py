"""An Input whose keystrokes repaint the field only, not the whole screen.

Textual's Input sets its `virtual_size` to the text's width on every change, and `virtual_size` is declared
with `layout=True`; the next layout sets it back to the field's width. So each key laid out every widget on
the screen (~80 on the Train view): ~12 ms of the UI thread per key on this 2-core machine, taken from a
training run sharing the cores (benchmarks/interface/ui_latency.py). Our fields have fixed widths, so the text's width
never changes the layout: declaring the reactive without `layout` halves the cost per key (~6 ms). A field
sized `width: auto` still lays out on each change, because Input asks for that itself.

A field not being typed in shows its value from the start (issue 25: a form never hides a value's head), and a
field a fixed number of cells wide takes no word longer than it shows beside its cursor (issue 36: the long tier
typed 57745774 into a 6-cell field, which read "…"; a number is never cut). Free text ends in "…" after whole
words, in any field.
"""

from __future__ import annotations

from typing import Any, cast

from rich.text import Text
from textual.css.scalar import Unit
from textual.geometry import Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import Input

from tui_lab.app.view_contract import LabServices
from tui_lab.app.widgets.cut import keep_cells


class FieldInput(Input):
    """Input for a fixed-width form field."""

    virtual_size = Reactive(Size(0, 0), repaint=True, layout=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.own_restrict = bool(kwargs.get("restrict"))  # a field's own rule stands; else its width rules

    def on_mount(self) -> None:
        # A run training when this field mounts keeps its cursor still, as it did every field on screen then:
        # the App declares `fields_blink` in the contract (view_contract.LabServices), the Train view's monitor
        # sets it. An app of other making that mounts a FieldInput declares it too.
        self.cursor_blink = cast(LabServices, self.app).fields_blink

    def on_resize(self) -> None:
        width = self.styles.width
        if width is None or width.unit != Unit.CELLS or self.content_region.width < 2 or self.own_restrict:
            return
        # One cell for the cursor, so a word shows whole while typed too; a key that would make a word longer
        # is refused. Words, not the value: a list ("0 1 2 3") may run on and end in "…" after a whole one.
        self.restrict = rf"(?:\s|(?<!\S{{{self.content_region.width - 1}}})\S)*"

    def render_line(self, y: int) -> Strip:
        """Not being typed in, the field shows its value from the first character (Input keeps the scroll of
        the last edit: "hundred thirty two" for "four hundred thirty two"); a value wider than the field ends
        in "…" after whole words (`cut.keep_cells`), never inside a number."""
        if y != 0 or self.has_focus or not self.value or self.password:
            return super().render_line(y)
        width = self.scrollable_content_region.width
        keep, tail = keep_cells(self.value, width)
        text = Text(self.value[:keep] + tail, no_wrap=True, overflow="ignore", end="")  # end: no newline segment
        if self.highlighter is not None:
            text = self.highlighter(text)
        options = self.app.console_options.update_width(width + 1)
        strip = Strip(self.app.console.render(text, options)).crop(0, width + 1).extend_cell_length(width + 1)
        return strip.apply_style(self.rich_style)
