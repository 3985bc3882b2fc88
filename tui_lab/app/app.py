"""The App: views as tabs, global keys, the command palette, and quitting.

Adding a view is one line in `VIEWS`. What the App asks of a view, and what a view may ask of the App, is
written in one place: `view_contract.py` (`LabView`, `LabServices`). The App's other jobs are objects it owns:
the keys and their pauses (`shell/keys.py`), mounting the views (`shell/view_mounting.py`), switching views and
where the focus goes (`shell/view_focus.py`), and the live model (`live/keeper.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from textual import events
from textual.app import ComposeResult, ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Header, TabbedContent, TabPane

from tui_lab.app.live.keeper import LiveModelKeeper
from tui_lab.app.live.model import LiveModel, ModelFailed, ModelReady, ModelStatus
from tui_lab.app.shell.first_frame import FirstFrame
from tui_lab.app.shell.key_queue import KeyQueue
from tui_lab.app.shell.keys import Keys
from tui_lab.app.shell.steady_screen import SteadyScreen
from tui_lab.app.shell.view_focus import ViewFocus
from tui_lab.app.shell.view_mounting import ViewMounting, ViewSpec
from tui_lab.app.textual_private import ContentTabs, FocusFollowingTabs, LabAppBase, install_parser
from tui_lab.app.view_contract import LabView, Opening, TrainingChanged
from tui_lab.app.widgets.grid_cells import use_theme
from tui_lab.app.widgets.narrow_row import NARROW_BELOW, NarrowRow
from tui_lab.app.widgets.steady_footer import SteadyFooter
from tui_lab.config import ModelConfig

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
    """Composes the views' tabs, binds the global keys, offers the palette's commands and quits; it is what a
    view reaches as `LabServices` (view_contract.py)."""

    CSS_PATH = "tui_lab.tcss"
    TITLE = "tui-lab"
    BINDINGS = [
        *_view_bindings(),
        # Off the footer (the palette and README name it): at 80 columns the footer's room is the view's keys'.
        Binding("t", "toggle_theme", "theme", show=False),
        Binding("i", "enter_field", "type", show=False),  # into the view's first field (Tab too)
        # Esc leaves a field; on the footer ("esc leave") only while the field takes every letter, q too, and so
        # `q quit` is off it (check_action): the footer names the way back to q (the crawler, issue 36).
        Binding("escape", "leave_typing_field", "leave", key_display="esc"),
        Binding("escape", "leave_field", "leave the field", show=False),
        Binding("ctrl+x", "cancel_build", "cancel build", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, config: ModelConfig, device: str = "cpu", checkpoint: str | None = None,
                 from_hf: str | None = None, origin: str | None = None, build: bool = True,
                 first_view: str = VIEWS[0].id) -> None:
        super().__init__()
        install_parser()  # Esc and a key read in one go are Esc and the key, not alt+key
        self.live = LiveModel(config, device)
        self._launch = (build, checkpoint, from_hf, origin or f"preset {config.name}")
        self.hf_options: dict[str, bool] = {}  # --download / --allow-pickle for from_hf (cli/launch.py sets them)
        self.train_on_start = False  # --train (cli/launch.py sets it): the Train view starts a run once mounted
        self.fields_blink = True  # text cursors blink; not while a run trains (TrainMonitor), fields mounted later too
        first = next(spec for spec in VIEWS if spec.id == first_view)  # the view the app opens on
        self.keys = Keys(self, super().on_event, self._fields_pending,
                         collapsible=frozenset(f"f{n}" for n in range(1, len(VIEWS) + 1)))
        self.mounting = ViewMounting(self, VIEWS, first, self.keys, lambda view_id: self.focus.activated(view_id),
                                     self._start_live_model)
        self.focus = ViewFocus(self, self.mounting, self.keys)
        self.keeper = LiveModelKeeper(self, self.live, self.views)

    # -- what a view may ask (LabServices) ---------------------------------------------------------
    @property
    def last_key_at(self) -> float:
        return self.keys.last_key_at

    @last_key_at.setter
    def last_key_at(self, at: float) -> None:
        self.keys.last_key_at = at

    @property
    def last_key_shown(self) -> bool:
        return self.keys.shown

    @property
    def waiting_for_parts(self) -> bool:
        """A Tab waits for the active view's fields (they mount now, not after a pause in the keys)."""
        return self.keys.tab_waits

    async def parts_mounted(self) -> None:
        """A view has mounted a part (it calls this): a Tab held for its fields goes on once they are in."""
        await self.keys.parts_mounted()

    def show_view(self, view_id: str, opening: Opening | None = None) -> None:
        self.focus.show(view_id, opening)

    def rebuild_model(self, config: ModelConfig, origin: str | None = None) -> None:
        self.keeper.rebuild(config, origin)

    def build_refusal(self, config: ModelConfig) -> str | None:
        return self.keeper.refusal(config)

    # -- the views (tests read them too) -------------------------------------------------------------
    def view(self, view_id: str) -> Any:
        view = self.mounted_view(view_id)
        if view is None:
            raise NoMatches(f"the {view_id} view is not mounted")
        return view

    def mounted_view(self, view_id: str) -> Any | None:
        return self.mounting.mounted(view_id)

    def views(self) -> list[LabView]:
        return self.mounting.views()

    def _fields_pending(self) -> bool:
        view = self.mounting.active()
        return view is not None and view.fields_pending

    # -- composing and starting ----------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        return SteadyScreen(id="_default")  # a focus change repaints what changed, not every cell

    def compose(self) -> ComposeResult:
        yield Header()
        tabs = self.mounting.tabs = Views(id="views", initial=self.mounting.first.id)
        with tabs:
            for i, spec in enumerate(VIEWS):
                with TabPane(_tab_label(i, spec), id=spec.id):
                    if spec is self.mounting.first:  # the views mount once this first frame is on screen
                        yield FirstFrame(self.live.config)
        yield SteadyFooter()  # rebuilt only when its keys change: a Tab between fields keeps it

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
            await self.mounting.mount_first()
            await self.query_one(FirstFrame).remove()
        await self.keys.open()  # keys typed on the first frame act on the view now there
        self.call_after_refresh(self._after_first_view)

    def _after_first_view(self) -> None:
        self.keeper.say_kept_run()
        self.mounting.after_first(train_first=self.train_on_start)

    def _start_live_model(self) -> None:
        build, checkpoint, from_hf, origin = self._launch
        self.keeper.start(build, checkpoint, from_hf, origin, self.hf_options)

    def on_resize(self, event: events.Resize) -> None:
        # All tabs in 80 columns: 75 without the space after each label, not 82. On the bar and the rows that
        # stack (NarrowRow), not the views' tabs: a resize across 82 restyled all ~670 widgets there (~0.4 s).
        self.query_one(ContentTabs).set_class(event.size.width < TABS_WIDTH, "-narrow-tabs")
        self.query(NarrowRow).set_class(event.size.width < NARROW_BELOW, "-narrow")

    # -- events and messages, each handed to the part whose job it is --------------------------------
    async def on_event(self, event: events.Event) -> None:
        await self.keys.on_event(event)

    async def on_key_queue_landed(self, message: KeyQueue.Landed) -> None:
        await self.keys.landed(message)

    async def on_steady_screen_resumed(self, message: SteadyScreen.Resumed) -> None:
        await self.keys.end_modal_pause()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.focus.tab_activated(event)

    def on_training_changed(self, message: TrainingChanged) -> None:
        self.mounting.tell(message.training)

    def on_model_status(self, message: ModelStatus) -> None:
        self.keeper.status(message)

    def on_model_ready(self, message: ModelReady) -> None:
        self.keeper.ready(message)

    def on_model_failed(self, message: ModelFailed) -> None:
        self.keeper.failed(message)

    # -- keys ----------------------------------------------------------------------------------------
    def action_show_view(self, view_id: str) -> None:
        self.focus.ask(view_id)

    def action_enter_field(self) -> None:
        self.focus.enter_field()

    def action_leave_field(self) -> None:
        self.focus.leave_field()

    def action_leave_typing_field(self) -> None:
        self.focus.leave_field()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_typing_field":  # else the hidden Esc binding, the same action
            focused = self.focused
            return focused is not None and focused.check_consume_key("q", "q")
        return True

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK

    def watch_theme(self) -> None:
        use_theme(self.current_theme.dark)  # the grids' colour scale follows (widgets/colour_map.py)

    def action_cancel_build(self) -> None:
        self.keeper.cancel()

    # -- quitting ------------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit, unless a view takes over first (`confirm_quit()` True: the Train view asks whether to save)."""
        if any(view.confirm_quit() for view in self.views()):
            return
        self.exit()

    def error_while_quitting(self, error: Exception) -> bool:
        # q pressed while a hidden view still mounts: its on_mount then queries children the shutdown has
        # already closed. Quitting early is not a fault, so it leaves no traceback behind.
        return isinstance(error, (NoMatches, ScreenStackError))

    async def before_exit(self) -> None:
        self.keeper.keep()

    # -- command palette -------------------------------------------------------------------------------
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
            for title, help_text, callback in view.palette_commands():
                yield SystemCommand(title, help_text, callback)


def _ask_for_hub_model(app: TuiLabApp) -> None:
    from tui_lab.app.hub_open import ask_for_hub_model  # imported when asked for, not before the first frame

    ask_for_hub_model(app)


def _bind(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args)
