"""Switching views, and where the keys go when a view opens: its home widget, never a text field (issue 23).

A view opens with focus on the widget its keys act on (`LabView.home()`: the grid, the completion, the Train
controls; the view itself when its keys are the view's own). Its footer then names its keys and every one acts
at once. Tab or `i` enters a field (`first_field()`, by default the first text box shown); while a field has
focus every letter types; Esc goes back home.
"""

from __future__ import annotations

from textual.app import App
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Input, Select, Switch, TabbedContent

from tui_lab.app.shell.keys import Keys
from tui_lab.app.shell.view_mounting import ViewMounting
from tui_lab.app.view_contract import LabView, Opening

FIELDS = (Input, Select, Switch)


def home_of(view: LabView) -> Widget | None:
    """None while the view's own widgets are still being composed (it is focused again after the refresh)."""
    try:
        return view.home()
    except NoMatches:
        return None


def first_field_of(view: LabView) -> Widget | None:
    try:
        return view.first_field()
    except NoMatches:
        return None


def in_field(widget: Widget | None) -> bool:
    return widget is not None and (isinstance(widget, FIELDS) or any(isinstance(a, FIELDS) for a in widget.ancestors))


class ViewFocus:
    def __init__(self, app: App, mounting: ViewMounting, keys: Keys) -> None:
        self.app, self.mounting, self.keys = app, mounting, keys
        self._wanted = ""
        self._switch_queued = False

    def ask(self, view_id: str) -> None:
        """A view key. Keys arriving faster than views can switch (a held key, a storm of 600) coalesce: the
        switch runs once, after the keys already queued, to the last view asked for, so nothing is left queued
        behind it (issue 24: 600 keys once kept the app busy for minutes)."""
        self._wanted = view_id
        if not self._switch_queued:
            self._switch_queued = True
            self.keys.pause()  # the keys typed after a view key are the new view's: they wait for the switch
            self.app.call_later(self._show_wanted)

    async def _show_wanted(self) -> None:
        self._switch_queued = False
        try:
            self.show(self._wanted)
        finally:
            await self.keys.resume()

    def show(self, view_id: str, opening: Opening | None = None) -> None:
        # A focused widget left in the pane we leave would pull its pane back to the front (TabbedContent
        # follows focus), so the view we leave gives up focus first.
        app, tabs = self.app, self.mounting.tabs
        pane = tabs.get_pane(view_id)
        if app.focused is not None and pane not in app.focused.ancestors:
            app.set_focus(None)
        tabs.active = view_id
        self.mounting.mount_now(view_id)  # not mounted yet: it mounts now, and is focused once mounted
        self.focus_home(view_id)  # now, not when TabActivated arrives: the next key is the view's already
        if opening is not None:
            self.mounting.with_view(view_id, lambda view: view.open_on(opening))

    def tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id != "views" or event.pane is None:
            return
        if self.app.focused is not None and event.pane not in self.app.focused.ancestors:
            self.app.set_focus(None)  # a tab clicked with the mouse: same reason as in show
        self.mounting.mount_now(str(event.pane.id))
        self.activated(str(event.pane.id))
        self.app.call_later(self.keys.end_click_pause)  # after the mount it may have started, queued before it

    def activated(self, view_id: str) -> None:
        view = self.mounting.mounted(view_id)  # none yet while it mounts: it is told once mounted
        if view is not None:
            view.view_activated()
        self.focus_home(view_id)
        # A tab clicked with the mouse: TabbedContent focuses its tabs as it activates the pane.
        self.app.call_after_refresh(self.focus_home, view_id, True)

    def focus_home(self, view_id: str, only_if_lost: bool = False) -> None:
        """Focus the view's home widget (its keys act at once), unless a field of the view has the keys."""
        if self.mounting.tabs.active != view_id:
            return
        app, view = self.app, self.mounting.mounted(view_id)
        home = home_of(view) if view is not None else None
        inside = view is not None and app.focused is not None and view in app.focused.ancestors_with_self
        if home is not None and not (only_if_lost and inside) and not (inside and in_field(app.focused)):
            app.screen.set_focus(home, scroll_visible=False)  # now: Widget.focus() waits a turn

    def enter_field(self) -> None:
        view = self.mounting.active()
        field = first_field_of(view) if view is not None else None
        if field is not None:
            self.app.screen.set_focus(field)  # now, not a turn later: the next key is already the field's

    def leave_field(self) -> None:
        view = self.mounting.active()
        if view is not None and in_field(self.app.focused):
            home = home_of(view)
            if home is not None:
                self.app.screen.set_focus(home, scroll_visible=False)  # now: Widget.focus() waits a turn
