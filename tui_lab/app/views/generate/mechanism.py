"""The Generate view's mechanism panels (a mixin of GenerateView): `l` the logit lens of the prompt, `p`
activation patching between two prompts. A shown panel takes the completion's room (at 80x24 there is no
other); Escape, or generating again, gives it back."""

from __future__ import annotations

from textual.widgets import Input

from tui_lab.app.guard import guarded
from tui_lab.app.views.generate.lens_panel import LensPanel
from tui_lab.app.views.generate.patch_panel import PatchPanel
from tui_lab.app.widgets.mechanism_panel import MechanismPanel

OTHERS = ("#gen-body", "#gen-compare", "#gen-versus")


class GenerateMechanism:
    def compose_mechanism(self):
        yield LensPanel(id="gen-lens")
        yield PatchPanel(id="gen-patch")

    def _only(self, panel: MechanismPanel | None) -> None:
        """Show `panel` in the completion's place (None: the completion again)."""
        self.query_one("#gen-body").display = panel is None
        for other in self.query(MechanismPanel):
            if other is not panel and other.has_class("-shown"):
                other.cancel_job()
                other.remove_class("-shown")
        if panel is not None:
            for selector in OTHERS[1:]:
                self.query_one(selector).remove_class("-shown")

    @guarded
    def action_lens(self) -> None:
        panel = self.query_one(LensPanel)
        self._only(panel)
        panel.prompt = self.query_one("#gen-prompt", Input).value
        panel.run()

    def mechanism_model_changed(self) -> None:
        """A run asked for before the live model arrived starts now that it has."""
        for panel in self.query(MechanismPanel):
            panel.live_model_changed()

    def action_patch(self) -> None:
        panel = self.query_one(PatchPanel)
        self._only(panel)
        panel.open_with(self.query_one("#gen-prompt", Input).value)

    def stop_mechanism(self) -> None:
        for panel in self.query(MechanismPanel):
            panel.cancel()

    def on_mechanism_panel_hidden(self) -> None:  # a named handler: a mixin's @on is never registered
        self._only(None)
        self.home().focus()
