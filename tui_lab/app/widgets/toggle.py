"""A checkbox whose glyph says on or off: Textual's draws "X" both ways and only the colour changes, which
reads as ticked when off (and in any terminal without colour)."""

from __future__ import annotations

from textual.widgets import Checkbox

ON, OFF = "✔", " "


class OnOffCheckbox(Checkbox):
    DEFAULT_CSS = """
    OnOffCheckbox > .toggle--button { color: $text-muted; }
    OnOffCheckbox.-on > .toggle--button { color: $success; text-style: bold; }
    """

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - Textual's name; read on every render
        return ON if self.value else OFF
