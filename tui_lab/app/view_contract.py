"""What the App and a view promise each other, in one file.

The App asks a view only what `LabView` declares (every hook has a default, so a view overrides what it
needs); a view asks the App only what `LabServices` declares (`self.lab`). Everything else travels by message:
a view learns what another view is doing from a message the App passes on to every view (`TrainingChanged`
posted by the Train view reaches the others as `TrainingNews`), never by looking at that view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

if TYPE_CHECKING:
    from tui_lab.config import ModelConfig

PaletteCommand = tuple[str, str, Callable[[], Any]]  # (title, help, what it runs) for the command palette


@dataclass(frozen=True)
class Opening:
    """What a view is opened on (the Tour's g): a results tab, a grid kind, a (query, key) cell. A view reads
    the parts it knows and leaves the rest."""

    tab: str | None = None
    kind: str | None = None
    cursor: tuple[str, str] | None = None


class LabServices(Protocol):
    """What a view may ask of the App (`LabView.lab`)."""

    live: Any  # the one live model every view reads (app/live/model.py's LiveModel: this module imports no app part)
    last_key_at: float  # time.monotonic() of the last key: costly redraws and mounts wait for a pause
    last_key_shown: bool  # a frame has shown the last key's effect: mounts wait for it too
    fields_blink: bool  # text cursors blink (not while a run trains)
    train_on_start: bool  # `tui-lab --train`: the Train view starts a run once mounted
    waiting_for_parts: bool  # a Tab waits for the active view's fields: they mount now, not after a pause

    def show_view(self, view_id: str, opening: Opening | None = None) -> None: ...
    async def parts_mounted(self) -> None: ...
    def rebuild_model(self, config: ModelConfig, origin: str | None = None) -> None: ...
    def build_refusal(self, config: ModelConfig) -> str | None: ...


class LabView(Widget):
    """A view: a tab of the App, laid out as a vertical container (a view may restyle its layout)."""

    DEFAULT_CSS = """
    LabView {
        width: 1fr;
        height: 1fr;
        layout: vertical;
        overflow: hidden hidden;
    }
    """

    def watch_has_focus(self, _has_focus: bool) -> None:
        """A view gaining or losing the focus restyles itself alone. Textual's restyles the view and every widget in
        it (a descendant's rule may read an ancestor's :focus), and `i` or Tab from a view that is its own home
        (Architecture: ~150-270 widgets) cost ~0.1-0.3 s of CPU per focus change. No rule styles a widget by its
        view's focus (tests/app/shell/test_view_focus_styles.py holds the stylesheet to that)."""
        self.app.stylesheet.update_nodes([self], animate=True)

    @property
    def lab(self) -> LabServices:
        return cast("LabServices", self.app)

    # -- what the App asks ---------------------------------------------------------------------------
    def home(self) -> Widget | None:
        """The widget focused when the view opens, whose keys act at once (issue 23); may raise NoMatches while
        the view composes."""
        return self if self.can_focus else None

    def first_field(self) -> Widget | None:
        """The field `i` (or Tab) enters: by default the first text box shown."""
        return next((w for w in self.query(Input) if _shown(w, self)), None)

    @property
    def fields_pending(self) -> bool:
        """Fields still to mount: a Tab waits for them (it would skip past them)."""
        return False

    @property
    def parts_pending(self) -> bool:
        """Parts still mounting after the view: the App mounts no other view meanwhile."""
        return False

    def view_activated(self) -> None:
        """Its tab was opened (or it mounted with its tab already open)."""

    def live_model_changed(self) -> None:
        """The live model was rebuilt or loaded (a view mounting later reads it on mount)."""

    def open_on(self, opening: Opening) -> None:
        """Shown by `LabServices.show_view(view_id, opening)`, once mounted."""

    def confirm_quit(self) -> bool:
        """True when the view takes over the quit (it asks first: the Train view while a run trains)."""
        return False

    def palette_commands(self) -> list[PaletteCommand]:
        return []


def _shown(widget: Widget, view: Widget) -> bool:
    """Focusable and displayed, with every container up to the view: `focusable` alone passed Train's hidden
    file box (display: none while the corpus is built-in), so `i` typed into a field nobody could see."""
    if not widget.focusable:
        return False
    node: Widget | None = widget
    while node is not None and node is not view:
        if not node.display:
            return False
        node = node.parent if isinstance(node.parent, Widget) else None
    return True


# -- app-wide news ---------------------------------------------------------------------------------------
class TrainingChanged(Message):
    """A run started or ended (posted by the Train view); it bubbles up to the App, which tells every view."""

    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training


class TrainingNews(Message, bubble=False):
    """`TrainingChanged` as the App passes it on to each view (and to a view mounted later): it stays there."""

    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training
