"""What the Generate view shows, where: its parts in order (`parts`, the view's compose) and the stylesheet by
which the live model's modes (`live.LiveModes.classes`: -nat, -encdec, -translate, -hf, -chat) and the boxes
over the completion (-folded, `room.Room`) show and hide them. The view keeps the keys and the jobs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Label, Static

from tui_lab.app.views.generate import versus
from tui_lab.app.views.generate.compare import ComparePanel
from tui_lab.app.views.generate.form import GenerationForm
from tui_lab.app.views.generate.growing_grid import GrowingGrid
from tui_lab.app.views.generate.lens_panel import LensPanel
from tui_lab.app.views.generate.live import DEFAULT_PROMPT
from tui_lab.app.views.generate.patch_panel import PatchPanel
from tui_lab.app.views.generate.stream import Completion
from tui_lab.app.widgets.field_input import FieldInput

CSS = """
GenerateView #gen-compare { display: none; }
GenerateView #gen-compare.-shown { display: block; }
GenerateView #gen-out-scroll { height: 1fr; }
GenerateView #gen-out-box:focus-within { border: round $accent; }
GenerateView #gen-probs-row { height: 1; }
GenerateView #gen-probs-row OnOffCheckbox { border: none; padding: 0; height: 1; margin-right: 1; }
GenerateView #gen-legend { width: 1fr; }
GenerateView #gen-token-info { height: auto; max-height: 5; color: $text; }
GenerateView .gen-nat-only, GenerateView #gen-vs-row, GenerateView #gen-versus { display: none; }
GenerateView.-nat .gen-nat-only, GenerateView.-encdec #gen-vs-row { display: block; }
GenerateView.-nat .gen-at-only { display: none; }
GenerateView #gen-versus.-shown { display: block; height: 1fr; }
GenerateView #gen-vs-row { height: 1; margin-top: 1; }
GenerateView #gen-vs { width: 1fr; }
GenerateView #gen-prompt-label { display: none; padding: 0 1 0 0; color: $text-muted; }
GenerateView.-translate #gen-prompt-label { display: block; }
GenerateView.-hf #gen-vs-row { display: none; }
GenerateView .gen-chat-only { display: none; }
GenerateView.-chat .gen-chat-only { display: block; }
GenerateView #gen-panel-prompt { display: none; height: auto; margin-top: 1; }
GenerateView.-folded #gen-panel-prompt { display: block; }
"""


def parts() -> ComposeResult:
    """The view's widgets, top to bottom: the prompt row, the settings, the partner row, the note, the room."""
    with Horizontal(id="gen-inputs"):
        yield Label("source", id="gen-prompt-label")  # shown while the live model translates
        # Entered with i or Tab, the cursor goes to the end: a prompt is continued more often than replaced.
        yield FieldInput(DEFAULT_PROMPT, placeholder="prompt (the source, for an encoder-decoder)", id="gen-prompt",
                         compact=True, select_on_focus=False)
        yield Button("Generate g", id="gen-go", variant="primary", compact=True)
        yield Button("Compare m", id="gen-compare-go", compact=True)
        yield Button("Stop s", id="gen-stop", variant="error", compact=True)
    yield GenerationForm(id="gen-settings")
    with Horizontal(id="gen-vs-row"):  # encoder-decoders: a second model to put beside the live one
        yield Label("vs", classes="gen-name")
        yield FieldInput(versus.DEFAULT_PARTNER, placeholder="checkpoint folder or shipped toy", id="gen-vs",
                         compact=True)
        yield Button("Side by side v", id="gen-vs-go", compact=True)
    yield Static("", id="gen-note")
    with Horizontal(id="gen-body"):
        yield Completion(id="gen-out-box")
        yield GrowingGrid(id="gen-att-box")
    yield Static("", id="gen-panel-prompt")  # the prompt the boxes answer, while they fold the completion
    yield ComparePanel(id="gen-compare")
    yield versus.VersusPanel(id="gen-versus")
    # In the completion's place when shown (at 80x24 there is no other); Escape, or generating again, gives it back
    yield LensPanel(id="gen-lens")
    yield PatchPanel(id="gen-patch")
