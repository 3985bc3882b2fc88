"""Views mount lazily: the first once the first frame is on screen, the hidden ones one per turn while no key
comes, a view opened before its turn at once (keys wait for it); then the live model's build.

Each view lives in its tab's pane as `#view-<id>`; `mounted(id)` finds it there, never by a walk of the DOM.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from textual.app import App
from textual.css.query import NoMatches
from textual.widgets import TabbedContent

from tui_lab.app.shell.keys import Keys
from tui_lab.app.view_contract import LabView, TrainingNews

# Hidden views mount while no key has come for this long: a person typing never waits behind a mount.
KEY_QUIET_S = 0.5


@dataclass(frozen=True)
class ViewSpec:
    id: str
    title: str
    target: str  # "module:Class", imported when the app composes

    def widget_class(self) -> type[LabView]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    async def imported_class(self) -> type[LabView]:
        """`widget_class`, its module imported in a thread: the Train view's imports torch (~5 s beside a busy
        CPU), and on the event loop every key waited for it; in a thread the loop keeps taking keys."""
        module = self.target.partition(":")[0]
        if module not in sys.modules:
            await asyncio.to_thread(_import_for_good, module)
        return self.widget_class()


def _import_for_good(module: str) -> None:
    """Import `module`, then freeze what is alive (`gc.freeze`): its modules (torch's with the Train view's, ~300k
    objects) live as long as the process, yet the collections after the import walked them all, ~0.3 s of the
    event loop apiece beside a busy CPU (measured in tmux with gc.callbacks), while the first keys waited. Once per
    module and process; whatever else is frozen with them is at most one app's widgets."""
    importlib.import_module(module)
    gc.freeze()


class ViewMounting:
    def __init__(self, app: App, specs: list[ViewSpec], first: ViewSpec, keys: Keys,
                 activated: Callable[[str], None], all_mounted: Callable[[], None]) -> None:
        self.app, self.specs, self.first, self.keys = app, specs, first, keys
        self._activated, self._all_mounted = activated, all_mounted  # a view shown before it mounted; the end
        self.tabs: TabbedContent | None = None  # the views' tabs (the App's compose sets them)
        self.training = False  # the last TrainingNews, told to each view as it mounts
        self._unmounted: list[ViewSpec] = []  # hidden views still to mount after the first frame
        self._waiters: dict[str, list[Callable[[LabView], None]]] = {}  # `with_view`'s callbacks
        self._done = False
        self._tracker_started = False
        self._mounting = 0  # mounts under way: a view opened early mounts alone, never beside a hidden one

    # -- finding -----------------------------------------------------------------------------------
    def mounted(self, view_id: str) -> LabView | None:
        """The view once mounted, else None. Looked up in its own pane: a query of `#view-...` walks the whole
        DOM (~650 widgets; ~7 ms a view, ~60 ms for all seven on an idle machine), and the mounting loop asked for
        all seven every 50 ms while the first view mounted its parts; so did every view switch, Tab and key."""
        try:
            return self.tabs.get_pane(view_id).get_child_by_id(f"view-{view_id}") \
                if self.tabs is not None else None
        except (NoMatches, ValueError):  # ValueError: no view id (no tab active)
            return None

    def views(self) -> list[LabView]:
        return [view for spec in self.specs if (view := self.mounted(spec.id)) is not None]

    def active(self) -> LabView | None:
        return self.mounted(str(self.tabs.active)) if self.tabs is not None else None

    def with_view(self, view_id: str, callback: Callable[[LabView], None]) -> None:
        """`callback(view)` now, or once the view has mounted."""
        view = self.mounted(view_id)
        if view is not None:
            callback(view)
        else:
            self._waiters.setdefault(view_id, []).append(callback)
            self.mount_now(view_id)

    # -- mounting ----------------------------------------------------------------------------------
    async def mount_first(self) -> None:
        await self._mount(self.first)

    def after_first(self, train_first: bool) -> None:
        if train_first:  # the first view (Train, with --train) spawns a process
            self.ensure_tracker()
        self._unmounted = [spec for spec in self.specs if spec is not self.first]
        if train_first:  # --train: the Train view first (it starts the run)
            self._unmounted.sort(key=lambda spec: spec.id != "train")
        self.app.call_after_refresh(self.mount_next)

    async def mount_next(self) -> None:
        """Mount the hidden views one per turn of the App's queue while no key is coming; then `all_mounted`.

        A key waits for the mount under way (~0.1-0.5 s on a busy machine), never for the next: mounting
        pauses until no key has come for KEY_QUIET_S. A view opened before it is mounted mounts at once."""
        if not self._unmounted:
            if not self._done:
                self._done = True
                # Its process's start (~0.1 s of a core) waits until every view is in, not on the keys' path; a
                # run started before then starts it itself (train/process.py's SharedRunControl).
                self.ensure_tracker()
                self._all_mounted()
            return
        quiet_for = self.keys.quiet_for
        # One view's parts at a time, and never beside a view opened before its turn (`mount_now`: its keys wait
        # for it; a hidden view mounting beside it took half the CPU it had) nor while keys wait for a switch.
        if self._mounting or self.keys.paused or any(view.parts_pending for view in self.views()):
            self.app.set_timer(0.05, self.mount_next)
            return
        if quiet_for < KEY_QUIET_S or self.keys.busy or not self.keys.shown:
            self.app.set_timer(max(KEY_QUIET_S - quiet_for, 0.05), self.mount_next)
            return
        await self._mount(self._unmounted.pop(0))
        self.app.call_after_refresh(self.mount_next)

    def mount_now(self, view_id: str) -> None:
        """A view opened (key, click, palette, tour) before it was mounted: mount it now; keys wait for it."""
        spec = next((s for s in self._unmounted if s.id == view_id), None)
        if spec is None:
            return
        self._unmounted.remove(spec)
        self.keys.pause()
        self.app.call_later(self._mount_then_resume, spec)

    async def _mount_then_resume(self, spec: ViewSpec) -> None:
        try:
            await self._mount(spec)
        finally:
            await self.keys.resume()
        if not self._unmounted:  # it was the last: the live model's turn
            self.app.call_after_refresh(self.mount_next)

    async def _mount(self, spec: ViewSpec) -> None:
        self._mounting += 1
        try:
            view_class = spec.widget_class() if spec is self.first else await spec.imported_class()
            view = view_class(id=f"view-{spec.id}")
            await self.tabs.get_pane(spec.id).mount(view)
        finally:
            self._mounting -= 1
        if self.training:
            view.post_message(TrainingNews(True))  # what it missed
        if self.tabs.active == spec.id:
            self._activated(spec.id)  # its tab was opened before it existed
        for callback in self._waiters.pop(spec.id, []):
            callback(view)

    def tell(self, training: bool) -> None:
        """A run started or ended: every view hears it (and a view mounted later, once mounted)."""
        self.training = training
        for view in self.views():
            view.post_message(TrainingNews(training))

    def ensure_tracker(self) -> None:
        if not self._tracker_started:
            self._tracker_started = True
            _start_resource_tracker()


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, a process of its own, once every view is in.

    Spawning it from inside the running app used to fail ("bad value(s) in fds_to_keep"): it passes
    `sys.stderr.fileno()` to the child, and Textual's stderr capture answers -1. So it gets the real
    stderr for the call, as it had when launch() started it before the app (and its first frame)."""
    import multiprocessing.resource_tracker

    with contextlib.redirect_stderr(sys.__stderr__):
        multiprocessing.resource_tracker.ensure_running()
