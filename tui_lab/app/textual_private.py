"""Every use of Textual's private API in the app, in one module, written for Textual 8.2 (8.2.8).

Each is here because no public API does the job; each says why. tests/app/shell/test_textual_private.py checks
that every private name used below still exists with the shape used here, so a Textual release that renames or
reshapes one fails that test and nothing else, and tests/project/test_textual_private_sites.py keeps the rest of
the app off Textual's private names. (The textual-serve overrides live in tui_lab/cli/serve_server.py, which pins
textual-serve; the test suite's own stylesheet cache is in tests/conftest.py.)
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from textual import events
from textual._xterm_parser import XTermParser  # the parser Textual's Linux drivers build: no public key hook
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane
from textual.widgets._tabbed_content import ContentTab, ContentTabs  # the tab bar's widgets: not exported

__all__ = ["ContentTab", "ContentTabs", "EscThenKeyParser", "FocusFollowingTabs", "LabAppBase",
           "SizeHookScrollView", "app_running", "install_parser", "key_stopped", "no_screens", "refresh_scrollbars",
           "screen_strips"]

ESC = "\x1b"
DRIVER_MODULES = ("textual.drivers.linux_driver", "textual.drivers.linux_inline_driver")


# -- reads of private state --------------------------------------------------------------------------------
def no_screens(app: App) -> bool:
    """The app is quitting (its screen stack emptied): `App.screen_stack` raises then, `_screen_stack` does not."""
    return not app._screen_stack


def screen_strips(widget: Widget) -> list[Strip]:
    """The rows of `widget`'s screen as composed at the last refresh: what a person sees now (a press that
    changed nothing on it is answered). The compositor holds them; `render_strips` leaves what is due to be
    drawn next untouched (`render_full_update` would clear it)."""
    return widget.screen._compositor.render_strips()


def app_running(app: App) -> bool:
    """Textual's own flag, cleared as the exit starts (`is_running` stays true until the loop has ended)."""
    return app._running


def key_stopped(key: events.Key) -> bool:
    """A widget used the key (it stopped it): Message has no public reader of that flag."""
    return key._stop_propagation


# -- calls of private methods -------------------------------------------------------------------------------
def refresh_scrollbars(widget: Widget) -> None:
    """Have a ScrollView decide its scrollbars again for the virtual size it holds now. Textual decides them when
    a layout changes the widget's size, before the widget's Resize handler runs; a virtual size set there (a
    grid laid out anew for its new box) is not followed by another decision, so a scrollbar the old layout
    needed stays beside content that now fits (the crawler's scrollbar-forecast rule: the logit lens at 80x22)."""
    widget._refresh_scrollbars()


# -- a ScrollView's size update, offered as a hook -----------------------------------------------------------
class SizeHookScrollView(ScrollView):
    """A ScrollView told of its new size (`size_set`) in the call where Textual gives it, before anything is drawn.

    Textual decides a ScrollView's scrollbars there, from the overflow the last layout left, and the widget's
    Resize handler, which lays it out for the new box, runs later: a frame or a check between them saw the old
    box's scrollbars beside a grid laid out for the new one (the long tier's HF 160x48 walk at 7cd90f9: the
    positional table laid out in 154x34, Textual's scrollbars leaving 156x34)."""

    def _size_updated(self, size, virtual_size, container_size, layout: bool = True) -> bool:
        resized = self._size != size
        sent = super()._size_updated(size, virtual_size, container_size, layout)
        if resized:
            self.size_set()
        return sent

    def size_set(self) -> None:
        return None


# -- the App's private hooks, offered as public ones -----------------------------------------------------------
class LabAppBase(App):
    """The App internals tui-lab needs, turned into hooks a subclass overrides: `error_while_quitting`
    (an error the app may drop when it is closing) and `before_exit` (awaited before Textual's exit work); and
    `frames`, the count of frames drawn so far."""

    frames = 0

    def _handle_exception(self, error: Exception) -> None:
        if not app_running(self) and self.error_while_quitting(error):
            return
        super()._handle_exception(error)

    async def _on_exit_app(self) -> None:
        await self.before_exit()
        await super()._on_exit_app()

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        """Every frame passes here (headless too, where it is not written): `frames` counts them, so the app knows
        when a key's effect has been on screen (shell/keys.py: mounts wait for it, not only for a pause)."""
        super()._display(screen, renderable)
        if renderable is not None and not self._batch_count:
            self.frames += 1

    def update_styles(self, node: DOMNode, animate: bool = True) -> None:
        """A class set on a widget not registered yet (composed, not mounted: `compact=True`, a view's `classes`)
        made Textual restyle it and its children at once, though registering it applies the stylesheet to each
        new widget anyway: ~210 of the ~350 restyles of a launch (~0.1 s of CPU) were thrown away so."""
        if isinstance(node, Widget) and node not in self._registry:
            return
        super().update_styles(node, animate)

    def error_while_quitting(self, error: Exception) -> bool:
        return False

    async def before_exit(self) -> None:
        return None


class FocusFollowingTabs(TabbedContent):
    """TabbedContent brings forward the pane whose widget took the focus (its private handler); a subclass says
    through `stale_focus` when that focus has already moved on, and Textual's handler is then skipped."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        if self.stale_focus(event.tab_pane):
            event.stop()
            event.prevent_default()  # TabbedContent's own handler would switch back

    def stale_focus(self, pane: TabPane) -> bool:
        return False


# -- Esc followed by a key in one read --------------------------------------------------------------------------
class EscThenKeyParser(XTermParser):
    """Esc followed by a key in one read is Esc, then that key (issue 23: Esc then a key "read as alt+key").

    A terminal sends alt+x as ESC x, so Textual's parser reads ESC and the next key arriving within its escape
    delay as alt+key: ESC x becomes alt+x (no binding: both keys lost) and ESC before a control key (Ctrl+R,
    Enter) is dropped. A person types Esc and the next key 70 ms apart, but a busy app reads them late, in one
    go: the walk beside a busy CPU typed "Esc ctrl+r 2 ↓ ↓" and the Esc never left the field, so the view keys
    after it typed into d_model. tui-lab binds no alt key, so an alt+key from the terminal is read as what a
    person most likely pressed: Esc, then the key."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if not alt and len(sequence) == 2 and sequence[0] == ESC and sequence[1] not in "[O":
            alt, sequence = True, sequence[1]  # ESC 2 (not the start of a CSI or SS3 sequence): Textual names it
            # "trade_mark_sign", the character option+2 types on a Mac
        if alt:
            yield events.Key("escape", ESC)
        yield from super()._sequence_to_key_events(sequence, alt=False)


def install_parser() -> None:
    """Textual's Linux drivers name the parser as a module global, which this replaces (a Textual without those
    drivers keeps its own)."""
    for name in DRIVER_MODULES:
        try:
            module = __import__(name, fromlist=["XTermParser"])
        except ImportError:
            continue
        if getattr(module, "XTermParser", None) is XTermParser:
            module.XTermParser = EscThenKeyParser
