"""The App: views as tabs, global keys, the command palette, and the one live model.

Adding a view is one line in `VIEWS`. A view is a widget that reads `self.app.live` (a `LiveModel`)
and may define `live_model_changed()` (called after every rebuild/load), `view_activated()` (its tab was
opened), `palette_commands()` (extra (title, help, callback) entries for the command palette), and `home()` /
`first_field()`: the widget focused when it opens and the one `i` enters (`view_focus`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from textual import events
from textual.app import ComposeResult, ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header, TabbedContent, TabPane

from tui_lab.analysis import memory
from tui_lab.app.shell.first_frame import FirstFrame
from tui_lab.app.shell.key_queue import KeyQueue
from tui_lab.app.live.model import LiveModel, ModelFailed, ModelReady, ModelStatus
from tui_lab.app.origin import origin_subtitle
from tui_lab.app.shell.steady_screen import SteadyScreen
from tui_lab.app.textual_private import (
    ContentTab,
    ContentTabs,
    FocusFollowingTabs,
    LabAppBase,
    install_parser,
    no_screens,
)
from tui_lab.app.shell.view_focus import first_field_of, home_of, in_field
from tui_lab.app.widgets.grid_cells import use_theme
from tui_lab.app.widgets.steady_footer import SteadyFooter
from tui_lab.config import ModelConfig
from tui_lab.devices import fit_problem, free_memory


@dataclass(frozen=True)
class ViewSpec:
    id: str
    title: str
    target: str  # "module:Class", imported when the app composes

    def widget_class(self) -> type[Widget]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    async def imported_class(self) -> type[Widget]:
        """`widget_class`, its module imported in a thread: the Train view's imports torch (~5 s beside a busy
        CPU), and on the event loop every key waited for it; in a thread the loop keeps taking keys."""
        module = self.target.partition(":")[0]
        if module not in sys.modules:
            await asyncio.to_thread(importlib.import_module, module)
        return self.widget_class()


VIEWS: list[ViewSpec] = [
    ViewSpec("architecture", "Architecture", "tui_lab.app.views.architecture.view:ArchitectureView"),
    ViewSpec("attention", "Attention", "tui_lab.app.views.attention.view:AttentionView"),
    ViewSpec("tour", "Tour", "tui_lab.app.views.tour.view:TourView"),
    ViewSpec("train", "Train", "tui_lab.app.views.train.view:TrainView"),
    ViewSpec("generate", "Generate", "tui_lab.app.views.generate.view:GenerateView"),
    ViewSpec("speed", "Speed", "tui_lab.app.views.speed.view:SpeedView"),
    ViewSpec("experiments", "Experiments", "tui_lab.app.views.experiments.view:ExperimentsView"),
]
LIGHT, DARK = "textual-light", "textual-dark"
# Hidden views mount while no key has come for this long: a person typing never waits behind a mount.
KEY_QUIET_S = 0.5
CLICK_WAIT_S = 1.0  # the longest keys wait for a clicked tab's view, or a dialog to close (it may stay)


VIEW_KEYS = Binding.Group("views")  # the footer shows "f1 ... f7 views"; the tabs name each number


# The footer names every view's F-key (f1..f7); a view keeps its own footer keys few and short enough that
# these and "q quit" still fit at 80 columns (tests/app/shell/test_app_80x24_cuts.py reads the Train view's).
FOOTER_VIEW_KEYS = 7


def _view_bindings() -> list[Binding]:
    keys = []
    for i, spec in enumerate(VIEWS[:9]):
        keys.append(Binding(f"f{i + 1}", f"show_view('{spec.id}')", spec.title, group=VIEW_KEYS,
                            show=i < FOOTER_VIEW_KEYS))
        keys.append(Binding(str(i + 1), f"show_view('{spec.id}')", spec.title, show=False))
    return keys


def _tab_label(i: int, spec: ViewSpec) -> str:
    return f"{i + 1} {spec.title}"  # the number is the view's F-key


TABS_WIDTH = sum(len(_tab_label(i, spec)) + 2 for i, spec in enumerate(VIEWS))  # labels and their padding


class Views(FocusFollowingTabs):
    """The views' tabs. A pane whose widget took the focus comes to the front, as in Textual, unless the
    focus has moved on since: switching views at typing speed (F6 F5), the Run button focused by F6 told its
    pane late and brought Speed back over Generate."""

    def on_mount(self) -> None:
        # The bar never takes the focus (a click on it focused it, and the keys after the click were its):
        # number and F-keys switch views, and a view opens on its home widget.
        self.get_child_by_type(ContentTabs).can_focus = False

    def stale_focus(self, pane: TabPane) -> bool:
        focused = self.app.focused
        return focused is None or pane not in focused.ancestors


class TuiLabApp(LabAppBase):
    CSS_PATH = "tui_lab.tcss"
    TITLE = "tui-lab"
    BINDINGS = [
        *_view_bindings(),
        # Off the footer (the palette and README name it): at 80 columns the footer's room is the view's keys'.
        Binding("t", "toggle_theme", "theme", show=False),
        Binding("i", "enter_field", "type", show=False),  # into the view's first field (Tab too)
        Binding("escape", "leave_field", "leave the field", show=False),
        Binding("ctrl+x", "cancel_build", "cancel build", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, config: ModelConfig, device: str = "cpu", checkpoint: str | None = None,
                 from_hf: str | None = None, origin: str | None = None, build: bool = True,
                 first_view: str = VIEWS[0].id) -> None:
        super().__init__()
        self.first_view = next(spec for spec in VIEWS if spec.id == first_view)  # the view the app opens on
        install_parser()  # Esc and a key read in one go are Esc and the key, not alt+key
        self.live = LiveModel(config, device)
        self._checkpoint, self._from_hf = checkpoint, from_hf
        self.hf_options: dict[str, bool] = {}  # --download / --allow-pickle for from_hf (cli/launch.py sets them)
        self._origin = origin or f"preset {config.name}"
        self._build_on_start = build
        self.last_key_at = float("-inf")  # time.monotonic() of the last key (views hold costly redraws meanwhile)
        self.fields_blink = True  # text cursors blink; not while a run trains (TrainMonitor), fields mounted later too
        self.keys = KeyQueue(collapsible=frozenset(f"f{n}" for n in range(1, len(VIEWS) + 1)))
        self._unmounted: list[ViewSpec] = []  # hidden views still to mount after the first frame
        self._view_waiters: dict[str, list[Callable[[Any], None]]] = {}  # with_view's callbacks
        self._key_pauses = 0  # switches and mounts under way that keys wait for
        self._model_started = False
        self._tracker_started = False
        self._switch_queued = False
        self._tab_waits = False  # a Tab waits for the form rows of the view that are still mounting
        self._click_pause: Timer | None = None  # keys wait for the view a click on its tab opens
        self._modal_pause: Timer | None = None  # keys wait for a dialog that Enter or Esc may close
        self._tabs: Views | None = None  # the views' tabs (compose)

    def get_default_screen(self) -> Screen:
        return SteadyScreen(id="_default")  # a focus change repaints what changed, not every cell

    def on_resize(self, event: events.Resize) -> None:
        # Every tab on one line at 80 columns: without the space after each label the bar needs 75, not 82.
        self.query_one("#views", TabbedContent).set_class(event.size.width < TABS_WIDTH, "-narrow-tabs")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:  # from the terminal: one at a time
            self.last_key_at = time.monotonic()
            if not self.keys.hold(event):
                await self._send_key(event)
        elif isinstance(event, events.MouseDown) and self._on_other_view_tab(event):
            # The keys after a click on a view's tab are that view's: they wait until it is shown (or 1 s).
            self._pause_keys()
            self._click_pause = self.set_timer(CLICK_WAIT_S, self._end_click_pause)
            await super().on_event(event)
        elif isinstance(event, events.Key) and self.keys.landed(event):
            if no_screens(self):  # quitting
                return
            await super().on_event(event)  # back at the App: its bindings (Tab, a view's key) act first
            await self._next_key()
        else:
            await super().on_event(event)

    def _on_other_view_tab(self, event: events.MouseDown) -> bool:
        if self._click_pause is not None or no_screens(self) or self.screen is not self.screen_stack[0]:
            return False
        try:
            widget, _ = self.screen.get_widget_at(event.screen_x, event.screen_y)
        except NoMatches:
            return False
        views = self.query_one("#views", TabbedContent)
        return isinstance(widget, ContentTab) and views.get_child_by_type(ContentTabs) in widget.ancestors and \
            widget.id != ContentTab.add_prefix(str(views.active))

    async def _end_click_pause(self) -> None:
        if self._click_pause is not None:
            self._click_pause.stop()
            self._click_pause = None
            await self._resume_keys()

    async def end_modal_pause(self) -> None:
        """The main screen is back (SteadyScreen calls this after the palette's command), or 1 s went by."""
        if self._modal_pause is not None:
            self._modal_pause.stop()
            self._modal_pause = None
            await self._resume_keys()

    async def _send_key(self, key: events.Key) -> None:
        if not self.is_running or no_screens(self):  # quitting: no screen to route it to
            return
        if key.key in ("enter", "escape") and len(self.screen_stack) > 1 and self._modal_pause is None:
            # Enter or Esc in a dialog or the palette may close it: the next keys are the view's then, not the
            # dialog's (the palette runs its command after it has gone). They wait for it to go (or 1 s).
            self._pause_keys()
            self._modal_pause = self.set_timer(CLICK_WAIT_S, self.end_modal_pause)
        if key.key in ("tab", "shift+tab") and not self._tab_waits and self._fields_pending(self._active_view()):
            # The view's later fields (the form's lower rows) are not in the focus chain yet: a Tab now would
            # skip them to a widget further on. It waits for them, and the keys behind it with it.
            self.keys.held.appendleft(key)
            self._tab_waits = True
            self._pause_keys()
            return
        target = self.focused or self.screen
        self.last_key_at = time.monotonic()  # and when it acts (held keys act late): mounts wait for both
        await super().on_event(key)  # Textual's routing: priority bindings, else to the focused widget
        if key.is_forwarded:
            self.keys.follow(self, key, target)
        else:
            await self._next_key()

    async def _next_key(self) -> None:
        key = self.keys.next()
        if key is not None:
            await self._send_key(key)

    async def parts_mounted(self) -> None:
        """A view has mounted a part (it calls this): a Tab held for its fields goes on once they are in."""
        if self._tab_waits and not self._fields_pending(self._active_view()):
            self._tab_waits = False
            await self._resume_keys()

    @property
    def waiting_for_parts(self) -> bool:
        """A Tab waits for the active view's fields (they mount now, not after a pause in the keys)."""
        return self._tab_waits

    @staticmethod
    def _parts_pending(view: Widget | None) -> bool:
        return bool(getattr(view, "parts_pending", False))

    @staticmethod
    def _fields_pending(view: Widget | None) -> bool:
        return bool(getattr(view, "fields_pending", False))

    async def on_key_queue_landed(self, message: KeyQueue.Landed) -> None:
        if self.keys.landed(message.key):
            await self._next_key()

    def compose(self) -> ComposeResult:
        yield Header()
        self._tabs = Views(id="views", initial=self.first_view.id)
        with self._tabs:
            for i, spec in enumerate(VIEWS):
                with TabPane(_tab_label(i, spec), id=spec.id):
                    if spec is self.first_view:  # the views mount once this first frame is on screen (`on_ready`)
                        yield FirstFrame(self.live.config)
        yield SteadyFooter()  # rebuilt only when its keys change: a Tab between fields keeps it

    def error_while_quitting(self, error: Exception) -> bool:
        # q pressed while a hidden view still mounts: its on_mount then queries children the shutdown has
        # already closed. Quitting early is not a fault, so it leaves no traceback behind.
        return isinstance(error, (NoMatches, ScreenStackError))

    def on_mount(self) -> None:
        self.theme = DARK
        self.watch_theme()  # the grids' scale is the process's: a previous app may have left it light
        self.sub_title = "building the live model in the background..."

    async def on_ready(self) -> None:
        """The first frame is on screen (Textual's Ready): now the first view, which replaces the count line.

        Then, after that view has painted, the hidden views, and last the worker (its `import torch`
        holds the GIL for seconds): nothing of theirs delays what the person sees first, and every view
        exists before the live model arrives (views read it on mount or in `live_model_changed`)."""
        with self.batch_update():  # one repaint: the view in, the count line out
            await self._mount_view(self.first_view)
            await self.query_one(FirstFrame).remove()
        self.keys.open = True  # keys typed on the first frame act on the view now there
        await self._next_key()
        self.call_after_refresh(self._after_first_view)

    async def _after_first_view(self) -> None:
        self._ensure_tracker()  # the first view (Train, with --train) may spawn a process
        self._say_kept_run()
        self._unmounted = [spec for spec in VIEWS if spec is not self.first_view]
        if getattr(self, "train_on_start", False):  # --train: the Train view first (it starts the run)
            self._unmounted.sort(key=lambda spec: spec.id != "train")
        self.call_after_refresh(self._mount_next_view)

    async def _mount_next_view(self) -> None:
        """Mount the hidden views one per turn of the App's queue while no key is coming; the live model last.

        A key waits for the mount under way (~0.1-0.5 s on a busy machine), never for the next: mounting
        pauses until no key has come for KEY_QUIET_S. A view opened before it is mounted mounts at once
        (`_mount_now`)."""
        if not self._unmounted:
            if not self._model_started:
                self._model_started = True
                self._start_live_model()
            return
        quiet_for = time.monotonic() - self.last_key_at
        if any(self._parts_pending(view) for view in self.views()):  # one view's parts at a time
            self.set_timer(0.05, self._mount_next_view)
            return
        if quiet_for < KEY_QUIET_S or self.keys.in_flight is not None or self.keys.held:
            self.set_timer(max(KEY_QUIET_S - quiet_for, 0.05), self._mount_next_view)
            return
        await self._mount_view(self._unmounted.pop(0))
        self.call_after_refresh(self._mount_next_view)

    def _mount_now(self, view_id: str) -> None:
        """A view opened (key, click, palette, tour) before it was mounted: mount it now; keys wait for it."""
        spec = next((s for s in self._unmounted if s.id == view_id), None)
        if spec is None:
            return
        self._unmounted.remove(spec)
        self._pause_keys()
        self.call_later(self._mount_then_resume, spec)

    async def _mount_then_resume(self, spec: ViewSpec) -> None:
        try:
            await self._mount_view(spec)
        finally:
            await self._resume_keys()
        if not self._unmounted:  # it was the last: the live model's turn
            self.call_after_refresh(self._mount_next_view)

    def _pause_keys(self) -> None:
        """Keys from the terminal wait (a view is switching or mounting: they are the next view's keys)."""
        self._key_pauses += 1
        self.keys.open = False

    async def _resume_keys(self) -> None:
        self._key_pauses -= 1
        if self._key_pauses == 0:
            self.keys.open = True
            await self._next_key()

    async def _mount_view(self, spec: ViewSpec) -> None:
        if spec is not self.first_view:  # before any view that can spawn a process (the first waits a frame)
            self._ensure_tracker()
        view_class = spec.widget_class() if spec is self.first_view else await spec.imported_class()
        await self._tabs.get_pane(spec.id).mount(view_class(id=f"view-{spec.id}"))
        if self.query_one("#views", TabbedContent).active == spec.id:
            self._activated(spec.id)  # its tab was opened before it existed
        for callback in self._view_waiters.pop(spec.id, []):
            callback(self.view(spec.id))

    def _ensure_tracker(self) -> None:
        if not self._tracker_started:
            self._tracker_started = True
            _start_resource_tracker()

    def with_view(self, view_id: str, callback: Callable[[Any], None]) -> None:
        """`callback(view)` now, or once the view has mounted (views not yet shown mount lazily)."""
        view = self.mounted_view(view_id)
        if view is not None:
            callback(view)
        else:
            self._view_waiters.setdefault(view_id, []).append(callback)
            self._mount_now(view_id)

    def _start_live_model(self) -> None:
        if not self._build_on_start:
            self.sub_title = "live model not built"
        elif self._checkpoint:
            self.live.start_load_checkpoint(self, self._checkpoint)
        elif self._from_hf:
            from tui_lab.app.hub_open import open_from_hub  # its modals are not needed for the first frame

            open_from_hub(self, self._from_hf, **self.hf_options)  # an uncached id asks before downloading
        else:
            self.live.start_build(self, self.live.config, self._origin)

    # -- views -------------------------------------------------------------------------------------
    def view(self, view_id: str) -> Any:
        view = self.mounted_view(view_id)
        if view is None:
            raise NoMatches(f"the {view_id} view is not mounted")
        return view

    def mounted_view(self, view_id: str) -> Any | None:
        """The view once mounted, else None. Looked up in its own pane: a query of `#view-...` walks the whole
        DOM (~650 widgets; ~7 ms a view, ~60 ms for all seven on an idle machine), and the mounting loop asked for
        all seven every 50 ms while the first view mounted its parts; so did every view switch, Tab and key."""
        try:
            return self._tabs.get_pane(view_id).get_child_by_id(f"view-{view_id}") if self._tabs is not None else None
        except (NoMatches, ValueError):  # ValueError: no view id (no tab active)
            return None

    def views(self) -> list[Widget]:
        return [view for spec in VIEWS if (view := self.mounted_view(spec.id)) is not None]

    def action_show_view(self, view_id: str) -> None:
        """A view key. Keys arriving faster than views can switch (a held key, a storm of 600) coalesce: the
        switch runs once, after the keys already queued, to the last view asked for, so nothing is left queued
        behind it (issue 24: 600 keys once kept the app busy for minutes)."""
        self._wanted_view = view_id
        if not self._switch_queued:
            self._switch_queued = True
            self._pause_keys()  # the keys typed after a view key are the new view's: they wait for the switch
            self.call_later(self._show_wanted_view)

    async def _show_wanted_view(self) -> None:
        self._switch_queued = False
        try:
            self.show_view(self._wanted_view)
        finally:
            await self._resume_keys()

    def show_view(self, view_id: str) -> None:
        # A focused widget left in the pane we leave would pull its pane back to the front (TabbedContent
        # follows focus), so the view we leave gives up focus first.
        pane = self._tabs.get_pane(view_id)
        if self.focused is not None and pane not in self.focused.ancestors:
            self.set_focus(None)
        self.query_one("#views", TabbedContent).active = view_id
        self._mount_now(view_id)  # not mounted yet: it mounts now, and is focused once mounted
        self._focus_home(view_id)  # now, not when TabActivated arrives: the next key is the view's already

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id != "views" or event.pane is None:
            return
        if self.focused is not None and event.pane not in self.focused.ancestors:
            self.set_focus(None)  # a tab clicked with the mouse: same reason as in show_view
        self._mount_now(str(event.pane.id))
        self._activated(str(event.pane.id))
        self.call_later(self._end_click_pause)  # after the mount it may have started, queued before it

    def _activated(self, view_id: str) -> None:
        view = self.mounted_view(view_id)  # none yet while it mounts: it is told once mounted
        if view is not None and hasattr(view, "view_activated"):
            view.view_activated()
        self._focus_home(view_id)
        # A tab clicked with the mouse: TabbedContent focuses its tabs as it activates the pane.
        self.call_after_refresh(self._focus_home, view_id, True)

    def _focus_home(self, view_id: str, only_if_lost: bool = False) -> None:
        """Focus the view's home widget (its keys act at once), unless a field of the view has the keys."""
        if self.query_one("#views", TabbedContent).active != view_id:
            return
        view = self.mounted_view(view_id)
        home = home_of(view) if view is not None else None
        inside = view is not None and self.focused is not None and view in self.focused.ancestors_with_self
        if home is not None and not (only_if_lost and inside) and not (inside and in_field(self.focused)):
            self.screen.set_focus(home, scroll_visible=False)  # now: Widget.focus() waits a turn

    def _active_view(self) -> Widget | None:
        return self.mounted_view(self._tabs.active) if self._tabs is not None else None

    def action_enter_field(self) -> None:
        view = self._active_view()
        field = first_field_of(view) if view is not None else None
        if field is not None:
            self.screen.set_focus(field)  # now, not a turn later: the next key is already the field's

    def action_leave_field(self) -> None:
        view = self._active_view()
        if view is not None and in_field(self.focused):
            home = home_of(view)
            if home is not None:
                self.screen.set_focus(home, scroll_visible=False)  # now: Widget.focus() waits a turn

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK

    def watch_theme(self) -> None:
        use_theme(self.current_theme.dark)  # the grids' colour scale follows (widgets/colour_map.py)

    # -- the live model ----------------------------------------------------------------------------
    def rebuild_model(self, config: ModelConfig, origin: str | None = None) -> None:
        """Rebuild the live model from `config` in a worker; refused at once when it cannot fit."""
        problem = self.build_refusal(config)
        if problem:
            self.notify(problem, title="not built", severity="error")
            return
        self.live.start_build(self, config, origin or f"config {config.name}")

    def build_refusal(self, config: ModelConfig) -> str | None:
        """Why `config` cannot be built here (its weights do not fit in free memory), or None."""
        if self.live.device.startswith("cuda"):
            return None
        return fit_problem(memory(config).weights, free_memory("cpu"), self.live.device)

    def action_cancel_build(self) -> None:
        if self.live.cancel():
            self.sub_title = self.live.status
            self.notify("build cancelled; the previous model stays live")

    def on_model_status(self, message: ModelStatus) -> None:
        self.sub_title = message.text

    def on_model_ready(self, message: ModelReady) -> None:
        self.live.install(message)
        self.sub_title = origin_subtitle(self.live)  # every view shows this model: say where its weights came from
        if self.live.origin.startswith(("checkpoint ", "hf ")):  # a load the person asked for: say what came in
            self.notify(f"{self.live.status}", title="loaded")
        for view in self.views():
            if hasattr(view, "live_model_changed") and view.is_mounted:  # a view mounting now reads it on mount
                view.live_model_changed()

    def on_model_failed(self, message: ModelFailed) -> None:
        self.live.building = False
        self.live.status = "failed" if self.live.model is None else self.live.status
        self.sub_title = f"live model: {message.error}"
        self.notify(message.error, title="live model", severity="error", timeout=8)

    def _say_kept_run(self) -> None:
        """A served session's next visit: where the run it was training when it closed was kept (app/autosave.py)."""
        from tui_lab.app.autosave import kept_run_note

        note = kept_run_note()
        if note:
            self.notify(note, title="your run was kept", timeout=30)

    async def before_exit(self) -> None:
        """A served session saves its live model to its own folder before it goes (app/autosave.py)."""
        from tui_lab.app.autosave import autosave

        autosave(self.live)

    async def action_quit(self) -> None:
        """Quit, unless a view takes over first (`confirm_quit()` True: the Train view asks whether to save)."""
        if any(getattr(view, "confirm_quit", lambda: False)() for view in self.views()):
            return
        self.exit()

    # -- command palette ---------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for i, spec in enumerate(VIEWS):
            yield SystemCommand(f"Show {spec.title}", f"switch to the {spec.title} view (F{i + 1})",
                                _bind(self.show_view, spec.id))
        yield SystemCommand("Toggle light/dark theme", "t", self.action_toggle_theme)
        yield SystemCommand("Cancel model build", "ctrl+x: keep the previous live model", self.action_cancel_build)
        yield SystemCommand("Open a Hugging Face model...", "a model id (gpt2) or a folder; a download asks first",
                            lambda: _ask_for_hub_model(self))
        for view in self.views():
            for title, help_text, callback in getattr(view, "palette_commands", lambda: [])():
                yield SystemCommand(title, help_text, callback)


def _ask_for_hub_model(app: TuiLabApp) -> None:
    from tui_lab.app.hub_open import ask_for_hub_model  # imported when asked for, not before the first frame

    ask_for_hub_model(app)


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, a process of its own, once the first view is on screen.

    Spawning it from inside the running app used to fail ("bad value(s) in fds_to_keep"): it passes
    `sys.stderr.fileno()` to the child, and Textual's stderr capture answers -1. So it gets the real
    stderr for the call, as it had when launch() started it before the app (and its first frame)."""
    import multiprocessing.resource_tracker

    with contextlib.redirect_stderr(sys.__stderr__):
        multiprocessing.resource_tracker.ensure_running()


def _bind(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args)
