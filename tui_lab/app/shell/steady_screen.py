"""The app's main screen, not repainted whole when the focus moves (issue 23: a Tab cost 0.3-1.7 s busy).

Textual's Screen declares `focused` a repainting reactive, so every focus change marks the whole screen
dirty and the next frame renders and writes every cell (at 160 x 48 beside a busy CPU that was most of a
Tab). The widgets that gain and lose focus restyle and repaint themselves (their `:focus` rules), and the
footer follows the bindings, so the whole-screen repaint adds nothing to what is seen.

It also tells the app when it is shown again after a dialog (`Resumed`: keys typed after Enter or Esc in the
dialog wait for that, shell/keys.py).
"""

from __future__ import annotations

from textual.message import Message
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget


class SteadyScreen(Screen):
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    class Resumed(Message):
        """Shown again after a dialog or the palette."""

    def on_screen_resume(self) -> None:
        """Back from a dialog or the palette: keys held for it go on, after the palette's command (queued
        before this)."""
        self.app.post_message(self.Resumed())
