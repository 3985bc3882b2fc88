"""The footer, rebuilt only when the keys it shows change (issue 23: a Tab cost 0.3-1.7 s on a busy CPU).

Textual's Footer recomposes on every focus change: it removes its ~15 keys, mounts new ones and has the
whole screen laid out again, even when focus moves between two fields whose keys are the same (Tab
through the Architecture form). Profiled headless at 80 x 24, that recompose and the layout it forced
were most of a Tab's cost. This one compares what it would show with what it shows and keeps it when equal.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[tuple[object, ...], ...]


class SteadyFooter(Footer):
    _shown: Shown | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        shown = shown_bindings(self.screen)
        if shown != self._shown:
            self._shown = shown
            await self.recompose()


def shown_bindings(screen: Screen) -> Shown:
    """What Footer.compose draws from: every shown binding with its state, in order (the palette key too)."""
    return tuple((binding.key, binding.action, binding.description, binding.group, binding.show, enabled, tooltip)
                 for _, binding, enabled, tooltip in screen.active_bindings.values()
                 if binding.show or binding.action == "command_palette")
