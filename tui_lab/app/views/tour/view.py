"""Tour: seed 000's explainer, one step a page, the picture beside the words; n/p step, g opens the full view.

The pictures come from the two shipped trained toys, which the tour loads for itself (once, in a thread
worker, the first time the tab opens): the person's live model is never read or replaced here. Wide
terminals put the text left of the picture; narrow ones put it above.
"""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, ScrollableContainer, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Label, Static
from textual.worker import Worker

from tui_lab.app.guard import guarded
from tui_lab.app.view_contract import LabView
from tui_lab.app.views.tour.steps import STEPS
from tui_lab.errors import one_line

WIDE = 120  # columns from which text and picture sit side by side
LOAD_QUIET_S = 0.5  # the toys' load waits for a pause in the keys this long (`_load`)
TALL = 40  # lines from which a wide page stacks a picture's grids (`visuals.side_by_side`)


class PicturesReady(Message):
    def __init__(self, pictures) -> None:
        super().__init__()
        self.pictures = pictures


class PicturesFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class TourView(LabView):
    BINDINGS = [
        Binding("n,right", "next", "next"),
        Binding("p,left", "back", "back"),
        Binding("g,enter", "go", "open"),  # short: at 80 columns the footer keeps f1..f7 and q
        # The page scrolls by keys (issue 36 item 10: at 80x24 the post-LN diagram's foot sat below the fold and
        # Down did nothing, the focus being here, on the view, not on the scroll).
        Binding("down", "scroll_page('down')", "scroll", show=False),
        Binding("up", "scroll_page('up')", "scroll", show=False),
        Binding("pagedown", "scroll_page('page_down')", "scroll", show=False),
        Binding("pageup", "scroll_page('page_up')", "scroll", show=False),
        Binding("end", "scroll_page('end')", "scroll", show=False),
        Binding("home", "scroll_page('home')", "scroll", show=False),
    ]
    can_focus = True

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.step = 0
        self.pictures = None  # tui_lab.app.views.tour.pictures.Pictures once computed
        self.shown = -1  # the step whose picture is on the page
        self.worker: Worker | None = None
        self._opened_at = float("-inf")  # time.monotonic() of the tab's first opening

    def compose(self) -> ComposeResult:
        yield Label("", id="tour-title")
        with Container(id="tour-page"):
            with VerticalScroll(id="tour-text-scroll"):
                yield Static("", id="tour-text")
            yield Container(id="tour-visual")
        yield Static("", id="tour-nav")

    def on_mount(self) -> None:
        self.render_step()

    def on_resize(self) -> None:
        self.set_class(self.size.width >= WIDE, "wide")
        self.set_class(self.size.height >= TALL, "tall")

    def view_activated(self) -> None:
        """The first opening loads the toys; focus stays here for n/p/g."""
        if self.pictures is None and self.worker is None:
            self.query_one("#tour-text", Static).update("loading the shipped toys (transformer-2017-toy-numbers-de, "
                                                        "gpt2-toy-english) for the tour's pictures...")
            self._opened_at = time.monotonic()
            self._load()
        self.focus()

    def _load(self) -> None:
        """The toys load in a thread once the keys pause (LOAD_QUIET_S since the tab opened and since the last key,
        whose effect is on screen): their `import torch` loads extension modules that hold the GIL for ~1 s beside a
        busy CPU, and a view key pressed at the first frame waited that long before it acted."""
        if self.pictures is not None or self.worker is not None:
            return
        quiet_for = time.monotonic() - max(self.lab.last_key_at, self._opened_at)
        if quiet_for < LOAD_QUIET_S or not self.lab.last_key_shown:
            self.set_timer(max(LOAD_QUIET_S - quiet_for, 0.05), self._load)
            return

        def work() -> None:
            from tui_lab.app.views.tour.pictures import compute

            try:
                self.post_message(PicturesReady(compute()))
            except Exception as err:  # noqa: BLE001 - shown on the page, never a crash
                self.post_message(PicturesFailed(one_line(err)))

        self.worker = self.run_worker(work, thread=True, exclusive=True, group="tour", exit_on_error=False)

    def on_pictures_ready(self, message: PicturesReady) -> None:
        self.pictures = message.pictures
        self.render_step()

    def on_pictures_failed(self, message: PicturesFailed) -> None:
        self.worker = None  # opening the tab again retries
        self.query_one("#tour-text", Static).update(Content(f"the tour's toys did not load: {message.error}"))

    @property
    def ready(self) -> bool:
        return self.pictures is not None and self.shown == self.step

    @guarded
    def render_step(self) -> None:
        step = STEPS[self.step]
        self.query_one("#tour-title", Label).update(f"Step {self.step + 1} of {len(STEPS)}: {step.title}")
        dots = "".join("●" if i == self.step else "○" for i in range(len(STEPS)))
        # n and p named only where they move (issue 36's crawler: on the first page "p back" was named and p did
        # nothing); the footer dims them there (check_action)
        keys = [*(["n next"] if self.step < len(STEPS) - 1 else []), *(["p back"] if self.step > 0 else []),
                f"g open {step.view.title()}", "1 the model's form"]  # bare launch opens here
        self.query_one("#tour-nav", Static).update(f"{dots}  {' · '.join(keys)}")
        self.refresh_bindings()
        if self.pictures is None:
            return
        self.query_one("#tour-text", Static).update(step.text(self.pictures))
        self.query_one("#tour-text-scroll", VerticalScroll).scroll_home(animate=False)
        self.call_later(self._swap, self.step, step.visual(self.pictures))

    async def _swap(self, index: int, widget) -> None:
        """The old picture goes before the new one mounts (ids inside a picture stay unique)."""
        visual = self.query_one("#tour-visual", Container)
        await visual.remove_children()
        await visual.mount(widget)
        self.shown = index

    def show_step(self, index: int) -> None:
        index = max(0, min(len(STEPS) - 1, index))
        if index != self.step or self.shown != index:
            self.step = index
            self.render_step()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n dimmed on the last page, p on the first: there they would change nothing."""
        if action == "next":
            return True if self.step < len(STEPS) - 1 else None
        if action == "back":
            return True if self.step > 0 else None
        return True

    def action_next(self) -> None:
        self.show_step(self.step + 1)

    def action_back(self) -> None:
        self.show_step(self.step - 1)

    def _scroller(self) -> ScrollableContainer | None:
        """The picture's scroll when it has more than it shows, else the text's when it has, else none."""
        scrolls = [*self.query_one("#tour-visual").query(ScrollableContainer), self.query_one("#tour-text-scroll")]
        return next((s for s in scrolls if s.max_scroll_y > 0), None)

    def action_scroll_page(self, how: str) -> None:
        scroll = self._scroller()
        if scroll is None:
            self.notify("the whole page is on screen: nothing to scroll", timeout=2)
            return
        getattr(scroll, f"scroll_{how}")(animate=False)

    @guarded
    def action_go(self) -> None:
        STEPS[self.step].go(self.lab)

    def palette_commands(self) -> list[tuple[str, str, object]]:
        return [("Tour: next step", "n", self.action_next), ("Tour: previous step", "p", self.action_back),
                ("Tour: open the step's view", "g", self.action_go)]
