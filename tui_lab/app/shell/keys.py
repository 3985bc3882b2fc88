"""The App's key traffic: keys from the terminal one at a time (`KeyQueue`), and the pauses they wait through.

Keys typed after a view key, a click on a view's tab, Enter or Esc in a dialog, or a Tab while the view's
fields still mount belong to what comes next: they wait (at most CLICK_WAIT_S for a click or a dialog) until it
is there. The App hands every event here (`on_event`); what is not a key of ours goes on to Textual's routing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from textual import events
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widgets import TabbedContent

from tui_lab.app.shell.key_queue import KeyQueue
from tui_lab.app.textual_private import ContentTab, ContentTabs, LabAppBase, no_screens

CLICK_WAIT_S = 1.0  # the longest keys wait for a clicked tab's view, or a dialog to close (it may stay)
# Mounts wait for a frame drawn after the last key (its effect on screen); a key that changes nothing draws none,
# so they wait for one no longer than this after it.
SHOWN_WAIT_S = 2.0


class Keys:
    def __init__(self, app: LabAppBase, route: Callable[[events.Event], Awaitable[None]],
                 fields_pending: Callable[[], bool], collapsible: frozenset[str]) -> None:
        self.app, self._route, self._fields_pending = app, route, fields_pending  # route: Textual's App.on_event
        self.queue = KeyQueue(collapsible=collapsible)
        self.last_key_at = float("-inf")  # time.monotonic() of the last key (views hold costly redraws meanwhile)
        self.key_frame = 0  # the app's frame count then: a later frame shows the key's effect
        self.tab_waits = False  # a Tab waits for the form rows of the view that are still mounting
        self._pauses = 0  # switches and mounts under way that keys wait for
        self._click_pause: Timer | None = None  # keys wait for the view a click on its tab opens
        self._modal_pause: Timer | None = None  # keys wait for a dialog that Enter or Esc may close

    @property
    def quiet_for(self) -> float:
        return time.monotonic() - self.last_key_at

    @property
    def shown(self) -> bool:
        """The last key's effect is on screen: a frame was drawn after it acted (or SHOWN_WAIT_S went by). A part or
        a view mounting when only the pause had passed took the CPU the key's own frame was waiting for: beside a
        busy CPU the digit typed at the first frame showed ~1.5 s later, after a form part had mounted."""
        return self.app.frames > self.key_frame or self.quiet_for >= SHOWN_WAIT_S

    def _key_now(self) -> None:
        self.last_key_at = time.monotonic()
        self.key_frame = self.app.frames

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:  # from the terminal: one at a time
            self._key_now()
            if not self.queue.hold(event):
                await self._send(event)
        elif isinstance(event, events.MouseDown) and self._on_other_view_tab(event):
            # The keys after a click on a view's tab are that view's: they wait until it is shown (or 1 s).
            self.pause()
            self._click_pause = self.app.set_timer(CLICK_WAIT_S, self.end_click_pause)
            await self._route(event)
        elif isinstance(event, events.Key) and self.queue.landed(event):
            if no_screens(self.app):  # quitting
                return
            await self._route(event)  # back at the App: its bindings (Tab, a view's key) act first
            await self.next()
        else:
            await self._route(event)

    def _on_other_view_tab(self, event: events.MouseDown) -> bool:
        app = self.app
        if self._click_pause is not None or no_screens(app) or app.screen is not app.screen_stack[0]:
            return False
        try:
            widget, _ = app.screen.get_widget_at(event.screen_x, event.screen_y)
        except NoMatches:
            return False
        views = app.query_one("#views", TabbedContent)
        return isinstance(widget, ContentTab) and views.get_child_by_type(ContentTabs) in widget.ancestors and \
            widget.id != ContentTab.add_prefix(str(views.active))

    async def end_click_pause(self) -> None:
        if self._click_pause is not None:
            self._click_pause.stop()
            self._click_pause = None
            await self.resume()

    async def end_modal_pause(self) -> None:
        """The main screen is back (SteadyScreen says so after the palette's command), or 1 s went by."""
        if self._modal_pause is not None:
            self._modal_pause.stop()
            self._modal_pause = None
            await self.resume()

    async def _send(self, key: events.Key) -> None:
        app = self.app
        if not app.is_running or no_screens(app):  # quitting: no screen to route it to
            return
        if key.key in ("enter", "escape") and len(app.screen_stack) > 1 and self._modal_pause is None:
            # Enter or Esc in a dialog or the palette may close it: the next keys are the view's then, not the
            # dialog's (the palette runs its command after it has gone). They wait for it to go (or 1 s).
            self.pause()
            self._modal_pause = app.set_timer(CLICK_WAIT_S, self.end_modal_pause)
        if key.key in ("tab", "shift+tab") and not self.tab_waits and self._fields_pending():
            # The view's later fields (the form's lower rows) are not in the focus chain yet: a Tab now would
            # skip them to a widget further on. It waits for them, and the keys behind it with it.
            self.queue.held.appendleft(key)
            self.tab_waits = True
            self.pause()
            return
        target = app.focused or app.screen
        self._key_now()  # and when it acts (held keys act late): mounts wait for both
        await self._route(key)  # Textual's routing: priority bindings, else to the focused widget
        if key.is_forwarded:
            self.queue.follow(app, key, target)
        else:
            await self.next()

    async def next(self) -> None:
        key = self.queue.next()
        if key is not None:
            await self._send(key)

    async def landed(self, message: KeyQueue.Landed) -> None:
        if self.queue.landed(message.key):
            await self.next()

    async def parts_mounted(self) -> None:
        """A view has mounted a part: a Tab held for its fields goes on once they are in."""
        if self.tab_waits and not self._fields_pending():
            self.tab_waits = False
            await self.resume()

    def pause(self) -> None:
        """Keys from the terminal wait (a view is switching or mounting: they are the next view's keys)."""
        self._pauses += 1
        self.queue.open = False

    async def resume(self) -> None:
        self._pauses -= 1
        if self._pauses == 0:
            self.queue.open = True
            await self.next()

    async def open(self) -> None:
        """The first view is in: keys typed on the first frame act on it now."""
        self.queue.open = True
        await self.next()

    @property
    def paused(self) -> bool:
        """Keys wait for a switch or a mount under way."""
        return self._pauses > 0

    @property
    def busy(self) -> bool:
        """A key in flight or keys held: a mount would make them wait."""
        return self.queue.in_flight is not None or bool(self.queue.held)
