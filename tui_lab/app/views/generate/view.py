"""Generate: type a prompt, watch tokens stream from the live model, and compare the decoding modes.

Tokens arrive one message each from a thread worker (`jobs`). The completion reads as text (the prompt, then the
new tokens), each token shaded by its probability on `y`; a cursor over the tokens (left/right, or the mouse) shows
one token's probability and the top candidates of its step. The attention grid grows one row per new token, as the
KV cache does: the row is the new token's attention over the context so far (last layer, mean of heads;
cross-attention over the source for an encoder-decoder). Columns are the whole context (prompt, then each generated
token), labelled; keys a row could not see (not generated yet, or slid out of a learned-position window) are drawn
masked. The compare boxes (`m`) and the side by side (`v`) take the completion's place until `g` gives it back.

An encoder-decoder with a tokenizer (a Marian translator from Hugging Face, the shipped numbers-de toy)
translates: the prompt is the source sentence (by default seed 000's English 'seen' sentence, as the Attention
view picks it, or the toy's held-out number), the translation streams token by token under it, and the grid
is the cross-attention of each translated token over the source (target x source), growing a row per token.

The view composes its parts (in the order, and with the stylesheet, of `layout`), keeps the keys, starts the
jobs (`jobs`, `versus`) and hands each job's messages to the part that shows them: the settings row
(`form.GenerationForm`), the completion (`stream.Completion`), the grid (`growing_grid.GrowingGrid`), the compare
boxes (`compare.ComparePanel`), the side by side (`versus.VersusPanel`), the mechanism panels (`lens_panel`,
`patch_panel`; Escape in one posts `MechanismPanel.Hidden`). Two plain objects it owns: `room.Room` shows one of
these in the completion's place, and `prompt_keeper.PromptKeeper` keeps the prompt's default and the note as the
live model changes. What the view makes of the live model is in `live`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Button, Input

from tui_lab.app.background_job import disable
from tui_lab.app.guard import guarded
from tui_lab.app.view_contract import LabView
from tui_lab.app.views.generate import jobs, layout, versus
from tui_lab.app.views.generate.compare import ComparePanel
from tui_lab.app.views.generate.form import GenerationForm, seed_text
from tui_lab.app.views.generate.growing_grid import GrowingGrid
from tui_lab.app.views.generate.lens_panel import LensPanel
from tui_lab.app.views.generate.live import folder_of, live_modes, note_text, ready_model, start_len
from tui_lab.app.views.generate.patch_panel import PatchPanel
from tui_lab.app.views.generate.prompt_keeper import PromptKeeper
from tui_lab.app.views.generate.room import Room
from tui_lab.app.views.generate.stream import Completion, stream_prefix
from tui_lab.app.views.generate.token_stream import Token, TokenStream
from tui_lab.app.widgets.mechanism_panel import MechanismPanel
from tui_lab.generation.settings import GenerationSettings


class GenerateView(LabView):
    DEFAULT_CSS = layout.CSS  # what each mode of the live model shows and hides
    # Two keys on the footer (beside f1..f7 and q quit at 80 columns); the buttons name v, s and y.
    BINDINGS = [
        Binding("g", "generate", "generate"),
        Binding("m", "compare", "compare"),
        Binding("v", "versus", "side by side", show=False),
        Binding("s", "stop", "stop", show=False),
        Binding("y", "probs", "probabilities", show=False),
        Binding("down", "focus_completion", "to the completion", show=False),
        Binding("l", "lens", "logit lens", show=False),
        Binding("p", "patch", "patching", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = 0  # the current job's number: a message from an older one is dropped
        self._job_going = False
        self.translating = False  # an encoder-decoder with a tokenizer: the prompt is a source to translate
        self.prompt = PromptKeeper(self)  # the prompt's default and the note, following the live model
        self.room = Room(self)  # what holds the room under the prompt: the completion, the boxes, or a panel

    def compose(self) -> ComposeResult:
        yield from layout.parts()

    def on_mount(self) -> None:
        self._follow_live_model()
        self.running = False  # Stop s off until a job goes

    @property
    def running(self) -> bool:
        """A stream, comparison or side by side is going: s and Stop s act only then."""
        return self._job_going

    @running.setter
    def running(self, value: bool) -> None:
        self._job_going = value
        if self.is_attached:  # on_mount sets it again, with the button there
            disable(self.query_one("#gen-stop", Button), not value, self.home())
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """s dimmed while nothing runs (issue 36: a key that does not apply now)."""
        return (True if self._job_going else None) if action == "stop" else True

    # -- app hooks -----------------------------------------------------------------------------------
    def home(self) -> Widget:
        """The completion, the first box shown over it, or a mechanism panel's grid (`room.Room.home`)."""
        return self.room.home()

    def live_model_changed(self) -> None:
        self._follow_live_model()
        for panel in self.query(MechanismPanel):  # a run asked for before the model came starts now
            panel.live_model_changed()

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Generate: stream the prompt", "g / enter in the prompt", self.action_generate),
                ("Generate: compare greedy, top-k, top-p, beam", "m", self.action_compare),
                ("Generate: the live model beside a second one (AT vs NAT)", "v", self.action_versus),
                ("Generate: stop", "s", self.action_stop),
                ("Generate: the logit lens of the prompt (layers x positions)", "l", self.action_lens),
                ("Generate: activation patching between two prompts", "p", self.action_patch),
                ("Generate: show token probabilities", "y", self.action_probs),
                ("Generate: a token's probability and top-5", "down, then left/right", self.action_focus_completion)]

    def _follow_live_model(self) -> None:
        """The mode classes, an untouched prompt, the folder's defaults, the button and the note follow the live
        model."""
        live = self.app.live
        modes = live_modes(live)
        for name, on_ in modes.classes().items():
            self.set_class(on_, name)
        self.translating = modes.translating
        self.prompt.follow(live, modes.translating)
        form = self.query_one(GenerationForm).follow_folder(folder_of(live), start_len(live, self.prompt.text))
        self.query_one("#gen-go", Button).label = "Translate g" if modes.translating else "Generate g"
        self.prompt.note(note_text(live, modes, form), live)  # a task's checkpoint: its own source, from a worker

    def on_prompt_found(self, message: jobs.PromptFound) -> None:
        self.prompt.found(message)

    @on(Input.Changed, "#gen-prompt")
    def _prompt_changed(self) -> None:
        self.prompt.show_note()

    # -- settings ------------------------------------------------------------------------------------
    def chat(self) -> bool:
        """The chat toggle is on, for a model that has a chat template."""
        return self.has_class("-chat") and self.query_one(GenerationForm).chat_on()

    def settings(self) -> GenerationSettings:
        """The form's values; ValueError naming the field when one is not a number or out of range."""
        return self.query_one(GenerationForm).settings(nat=self.has_class("-nat"))

    # -- actions -------------------------------------------------------------------------------------
    @guarded
    def action_generate(self) -> None:
        s, model = self.settings(), ready_model(self.app.live)
        prompt = self.prompt.text
        self._begin()
        self.room.show_boxes(None)  # a single stream: the completion and the grid get the room back
        seed = seed_text(s, self.query_one(GenerationForm).seed_drawn)
        self.query_one(Completion).start(stream_prefix(prompt, model.config.family, self.translating), s, seed)
        tokenizer, job, chat = self.app.live.tokenizer, self.job, self.chat()
        self._run(lambda: jobs.stream_job(self, job, model, tokenizer, prompt, s, chat))

    @guarded
    def action_compare(self) -> None:
        s, model = self.settings(), ready_model(self.app.live)
        prompt = self.prompt.text
        self._begin()
        panel = self.query_one(ComparePanel)
        panel.waiting()
        self.room.show_boxes(panel, prompt, self.translating)
        tokenizer, job, chat = self.app.live.tokenizer, self.job, self.chat()
        self._run(lambda: jobs.compare_job(self, job, model, tokenizer, prompt, s, chat))

    @guarded
    def action_versus(self) -> None:
        s, model = self.settings(), ready_model(self.app.live)
        refusal = versus.refusal(model, hf=self.has_class("-hf"))
        if refusal:  # a key that does not apply to this model: said plainly, not as an error
            self.notify(refusal, title="side by side")
            return
        prompt, spec = self.prompt.text, self.query_one("#gen-vs", Input).value
        self._begin()
        panel = self.query_one(versus.VersusPanel)
        panel.waiting()
        self.room.show_boxes(panel, prompt, self.translating)
        live, job, kept = (model, self.app.live.tokenizer), self.job, panel.partners
        self._run(lambda: versus.versus_job(self, job, live, spec, kept, prompt, s))

    def _begin(self) -> None:
        """A new job. Focus stays where it is: after Enter in the prompt a person goes on typing there, and
        letters must reach the prompt, never the view's or the app's keys (the Stop button stops)."""
        self.job += 1
        self.running = True
        self.query_one(GrowingGrid).clear()
        self.room.show_panel(None)  # a mechanism panel gives the completion its room back

    def _run(self, work: Callable[[], None]) -> None:
        """`work` on a thread; one job at a time (a new one cancels the last), and s cancels the group."""
        self.run_worker(work, thread=True, group="generate", exclusive=True, exit_on_error=False)

    def action_stop(self) -> None:
        if self.running and self.query_one("#gen-body").display:  # a stream (compare and side by side fold the
            self.query_one(Completion).stopping()  # body away): its status says so until its pass has ended
        elif self.running:  # the compare boxes or the side by side: the boxes still to come say "stopped"
            for boxes in (self.query_one(ComparePanel), self.query_one(versus.VersusPanel)):
                if boxes.has_class("-shown"):
                    boxes.stopped()
        self._stop_generation()
        for panel in self.query(MechanismPanel):
            panel.cancel()

    def _stop_generation(self) -> None:
        self.workers.cancel_group(self, "generate")
        self.running = False

    def _show_panel(self, panel: MechanismPanel) -> None:
        """A mechanism panel in the room: the stream, comparison or side by side it puts away is stopped (its
        output could not be seen again, and Stop s stayed lit over the panel for a job nobody could see: the long
        tier's English 100x30 walk at 51361c5, seed 782230373, `5 m`, then `l`, then `s` changed nothing drawn)."""
        if self.running:
            self._stop_generation()
        self.room.show_panel(panel)

    def action_probs(self) -> None:
        self.query_one(Completion).toggle_probs()

    def action_focus_completion(self) -> None:
        self.query_one(TokenStream).focus()

    # -- the jobs' messages (each names its job: one from a replaced job is dropped) -----------------
    def on_started(self, message: jobs.Started) -> None:
        if message.job == self.job:
            self.query_one(GrowingGrid).begin(message.context, message.cross, message.copy, self.translating)

    def on_new_token(self, message: jobs.NewToken) -> None:
        if message.job == self.job:
            token = Token(message.token_id, message.label, message.prob, message.candidates)
            self.query_one(Completion).add(token, message.text)
            self.query_one(GrowingGrid).add(message.label, message.row, message.p_gen)

    def on_finished(self, message: jobs.Finished) -> None:
        if message.job == self.job:
            self.running = False
            self.query_one(Completion).finish(message.text, message.note, message.cancelled)

    def on_compare_result(self, message: jobs.CompareResult) -> None:
        if message.job == self.job and self.query_one(ComparePanel).show(message):
            self.running = False

    def on_versus_result(self, message: versus.VersusResult) -> None:
        if message.job == self.job and self.query_one(versus.VersusPanel).show(message):
            self.running = False

    def on_generate_failed(self, message: jobs.GenerateFailed) -> None:
        if message.job == self.job:
            self.running = False
            self.notify(message.error, title="generate", severity="error", timeout=8)

    # -- the mechanism panels (each in the completion's place while shown) -----------------------------
    @guarded
    def action_lens(self) -> None:
        panel = self.query_one(LensPanel)
        self._show_panel(panel)
        panel.prompt = self.prompt.text
        if not panel.answered("l"):  # on the prompt whose lens is drawn, it shows it and says so (no silent rerun)
            panel.run()

    def action_patch(self) -> None:
        panel = self.query_one(PatchPanel)
        self._show_panel(panel)
        panel.open_with(self.prompt.text)

    @on(MechanismPanel.Hidden)
    def _panel_hidden(self) -> None:
        self.room.show_panel(None)
        self.home().focus()

    # -- the inputs ----------------------------------------------------------------------------------
    @on(Input.Submitted, "#gen-prompt")
    def _submitted(self) -> None:
        self.action_generate()

    @on(Input.Submitted, ".gen-field")
    def _field_submitted(self) -> None:
        """Enter in a sampling field (temperature, top-k, seed...) generates with it, as Enter in the prompt does:
        it did nothing, and a typing field's footer names no g."""
        self.action_generate()

    @on(Input.Submitted, "#gen-vs")
    def _versus_submitted(self) -> None:
        self.action_versus()

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        actions = {"gen-go": self.action_generate, "gen-compare-go": self.action_compare, "gen-stop": self.action_stop,
                   "gen-vs-go": self.action_versus}
        if event.button.id in actions:
            event.stop()
            actions[event.button.id]()
