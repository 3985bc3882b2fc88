"""What holds the Generate view's room under the prompt: the completion with its attention grid (`#gen-body`),
the compare boxes (`m`), the side by side (`v`), or a mechanism panel (`l`, `p`).

A plain object the view owns (`Room(view)`). The compare boxes and the side by side take the completion's place
at every size (the view's `-folded` class), under the prompt they answer: a comparison streams nothing into the
completion or the grid (at 160x48 they stood empty above four 5-row boxes, at 80x24 the boxes squeezed them to
1-3 rows). A mechanism panel takes the room alone and puts the others away; `home` is what the view focuses.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from tui_lab.app.view_contract import LabView
from tui_lab.app.views.generate.compare import ComparePanel
from tui_lab.app.views.generate.token_stream import TokenStream
from tui_lab.app.views.generate.versus import VersusPanel
from tui_lab.app.widgets.mechanism_panel import MechanismPanel


class Room:
    """Shows one holder of `view`'s room at a time, and says which widget is its home."""

    def __init__(self, view: LabView) -> None:
        self.view = view

    def home(self) -> Widget:
        """The completion: g, m, v, s, y act at once, and its arrows walk the tokens (i: into the prompt).
        Folded under the compare boxes or the side by side, their first box; a mechanism panel's grid while
        one is shown."""
        panel = next((p for p in self.view.query(MechanismPanel) if p.has_class("-shown")), None)
        if panel is not None:
            return panel.grid  # its r and x act (Esc from its prompts came back to the completion, where r did nothing)
        if self.view.has_class("-folded"):
            return next(box for box in self.view.query(".gen-mode") if box.parent.has_class("-shown"))
        return self.view.query_one(TokenStream)

    def show_boxes(self, boxes: Widget | None, prompt: str | None = None, translating: bool = False) -> None:
        """The compare boxes or the side by side (`boxes`) in the completion's place, `prompt` whole above them
        (the prompt field is one line); None: the completion and its grid again."""
        view = self.view
        for panel in (view.query_one(ComparePanel), view.query_one(VersusPanel)):
            panel.set_class(panel is boxes, "-shown")
        if prompt is not None:
            name = "source" if translating else "prompt"
            shown = Content.from_markup("[dim]$name:[/] $prompt", name=name, prompt=prompt)  # typed text, not markup
            view.query_one("#gen-panel-prompt", Static).update(shown)
        folded = boxes is not None
        view.set_class(folded, "-folded")
        mechanism = any(panel.has_class("-shown") for panel in view.query(MechanismPanel))
        body = view.query_one("#gen-body")
        body.display = not (folded or mechanism)
        focused = view.app.focused
        if folded and (focused is None or body in focused.ancestors):
            self.home().focus()  # the view's keys stay on the footer, and the arrows scroll the first box

    def show_panel(self, panel: MechanismPanel | None) -> None:
        """Show `panel` in the completion's place (None: the completion again)."""
        view = self.view
        view.query_one("#gen-body").display = panel is None
        for other in view.query(MechanismPanel):
            if other is not panel and other.has_class("-shown"):
                other.put_away()
        if panel is not None:
            view.query_one(ComparePanel).remove_class("-shown")
            view.query_one(VersusPanel).remove_class("-shown")
            view.remove_class("-folded")
