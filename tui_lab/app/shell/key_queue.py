"""Keys from the terminal reach the widgets one at a time, each after the one before has landed.

Textual hands a key from the terminal to the widget focused *when the app reads it*; a key that moves the
focus (Tab, a view's number key) does so only when it has travelled back up to the App, where bindings
run. On a busy machine the terminal hands over several keys in one read, so the keys behind a Tab went to
the field it was leaving: Tab 5 1 2 typed "512" into decoder_layers and left d_model as it was, and digits
typed while a view switched became view switches (the garbled "712", "152", "125" of issue 23).

So the App holds each key from the terminal until the one before has landed: stopped by a widget that
used it, or back at the App (its bindings then run first). A key whose widget was removed on its way is
given up at once, and any key after `FLIGHT_S`; the next then goes on as Textual would send it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from textual import events
from textual.app import App
from textual.message import Message
from textual.widget import Widget

from tui_lab.app.textual_private import key_stopped

# The longest a key waits for the one before it. A key comes back in milliseconds, but a Tab that moves the
# focus restyles and lays out the screen first: up to 1.7 s at 160 x 48 beside a busy CPU (issue 23's walk).
FLIGHT_S = 10.0
POLL_S = 0.002


class KeyQueue:
    class Landed(Message):
        """The key in flight was used by a widget (or given up)."""

        def __init__(self, key: events.Key) -> None:
            super().__init__()
            self.key = key

    def __init__(self, collapsible: frozenset[str] = frozenset()) -> None:
        # Keys whose effect the next one of them replaces (the view keys): held back to back, only the last is
        # kept, so a storm of them (issue 24: 600 F-keys at once) ends in one switch to the last view asked for.
        self.collapsible = collapsible
        self.in_flight: events.Key | None = None
        self.open = False  # keys wait until the first view is mounted (a key on the first frame has no view)
        self.held: deque[events.Key] = deque()
        self._watcher: asyncio.Task | None = None

    def hold(self, key: events.Key) -> bool:
        """True when `key` must wait (a key is in flight, or others wait before it)."""
        if self.open and self.in_flight is None and not self.held:
            return False
        if self.held and key.key in self.collapsible and self.held[-1].key in self.collapsible:
            self.held[-1] = key  # nothing was typed between them: the earlier view would only flash by
        else:
            self.held.append(key)
        return True

    def follow(self, app: App, key: events.Key, target: Widget) -> None:
        """`key` has left for `target` (the focused widget, or the screen): watch for it being used there."""
        self.in_flight = key
        self._watcher = asyncio.get_running_loop().create_task(self._watch(app, key, target))  # kept: a task only
        # weakly referenced by the loop may be collected before it ends

    def landed(self, key: events.Key) -> bool:
        """`key` ended its journey; True if it was the one in flight."""
        if key is not self.in_flight:
            return False
        self.in_flight = None
        return True

    def next(self) -> events.Key | None:
        """The next held key, once none is in flight."""
        return self.held.popleft() if self.open and self.held and self.in_flight is None else None

    async def _watch(self, app: App, key: events.Key, target: Widget) -> None:
        end = time.monotonic() + FLIGHT_S
        # Stopped: a widget used it. The App's own Landed message then queues behind the key if the
        # screen bubbled it up to the App (Textual stops a key it bubbles back to its sender).
        while self.in_flight is key and not key_stopped(key) and time.monotonic() < end \
                and target.is_attached:
            await asyncio.sleep(POLL_S)
        if self.in_flight is key:
            app.post_message(self.Landed(key))
