"""Generate: type a prompt, watch tokens stream from the live model, and compare the decoding modes.

Tokens arrive one message each from a thread worker (`jobs`). The completion reads as text (the
prompt, then the new tokens), each token shaded by its probability on `y`; a cursor over the tokens (left/
right, or the mouse) shows one token's probability and the top candidates of its step. The compare panel
appears when `m` runs it, so at 80x24 the grid keeps the room. The attention grid grows one
row per new token, as the KV cache does: the row is the new token's attention over the context so far
(last layer, mean of heads; cross-attention over the source for an encoder-decoder). Columns are the
whole context (prompt, then each generated token), labelled; keys a row could not see (not generated
yet, or slid out of a learned-position window) are drawn masked.

An encoder-decoder with a tokenizer (a Marian translator from Hugging Face, the shipped numbers-de toy)
translates: the prompt is the source sentence (by default seed 000's English 'seen' sentence, as the Attention
view picks it, or the toy's held-out number), the translation streams token by token under it, and the grid
is the cross-attention of each translated token over the source (target x source), growing a row per token.

How the view follows the live model is in `live`; what it does with the workers' messages is in
`stream`; the side by side is `versus`.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from tui_lab.app.guard import guarded
from tui_lab.app.views.generate import jobs, versus
from tui_lab.app.views.generate.live import DEFAULT_PROMPT, GenerateLiveModel
from tui_lab.app.views.generate.mechanism import GenerateMechanism
from tui_lab.app.views.generate.stream import GenerateStream, sampling_text, stream_prefix
from tui_lab.app.views.generate.token_stream import TokenStream, describe, legend
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.generation.settings import GenerationSettings

FIELDS = (("temp", "temperature", "0.8"), ("top-k", "top_k", ""), ("top-p", "top_p", ""), ("beam", "beam_size", "1"),
          ("max", "max_new_tokens", "48"), ("nat-len", "nat_length", ""))
# Shown only for the models they apply to: a NAT model decodes in one pass (no beam, no cache) and takes a length.
ONLY_FOR = {"beam_size": "gen-at-only", "nat_length": "gen-nat-only"}
OPTIONAL = ("top_k", "top_p", "nat_length")  # empty means unset


class GenerateView(GenerateLiveModel, GenerateStream, GenerateMechanism, Vertical):
    DEFAULT_CSS = """
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
    GenerateView #gen-versus.-shown { display: block; height: 7; }
    GenerateView #gen-vs-row { height: 1; margin-top: 1; }
    GenerateView #gen-vs { width: 1fr; }
    GenerateView #gen-prompt-label { display: none; padding: 0 1 0 0; color: $text-muted; }
    GenerateView.-translate #gen-prompt-label { display: block; }
    GenerateView.-hf #gen-vs-row { display: none; }
    GenerateView .gen-chat-only { display: none; }
    GenerateView.-chat .gen-chat-only { display: block; }
    """
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
        self.job = 0
        self.running = False
        self.context: list[str] = []
        self.rows: list[tuple[int, list[float]]] = []  # (where its keys end in the context, the row)
        self.row_labels: list[str] = []
        self.cross = False
        self.copy = False  # a copy model: rows are the copy distribution, labelled with p_gen
        self.results: dict[str, str] = {}
        self.sampling = ""  # how the candidates' distribution was made, for the read-out
        self.cut = False  # top-k/top-p sampling: the candidates' probabilities are after the cut
        self.partners: dict[str, Any] = {}  # the second model of the side by side, loaded once per `vs` text
        self.versus_done: set[str] = set()
        self.translating = False  # an encoder-decoder with a tokenizer: the prompt is a source to translate
        self.field_defaults = {name: value for _, name, value in FIELDS}
        self.folder_fields: dict[str, Any] = {}  # the form's fields a Hugging Face folder's defaults set (folder.py)

    def compose(self) -> ComposeResult:
        with Horizontal(id="gen-inputs"):
            yield Label("source", id="gen-prompt-label")  # shown while the live model translates
            # Entered with i or Tab, the cursor goes to the end: a prompt is continued more often than replaced.
            yield FieldInput(DEFAULT_PROMPT, placeholder="prompt (the source, for an encoder-decoder)", id="gen-prompt",
                             compact=True, select_on_focus=False)
            yield Button("Generate g", id="gen-go", variant="primary", compact=True)
            yield Button("Compare m", id="gen-compare-go", compact=True)
            yield Button("Stop s", id="gen-stop", variant="error", compact=True)
        with Horizontal(id="gen-settings"):
            for title, name, value in FIELDS:
                only = ONLY_FOR.get(name, "")
                yield Label(title, classes=f"gen-name {only}")
                yield FieldInput(value, id=f"gen-{name}", classes=f"gen-field {only}", compact=True)
            yield OnOffCheckbox("cache", True, id="gen-cache", compact=True, classes="gen-at-only")
            # A model with a chat template: the prompt is one user turn through it, as apply_chat_template renders it
            yield OnOffCheckbox("chat", False, id="gen-chat", compact=True, classes="gen-chat-only")
        with Horizontal(id="gen-vs-row"):  # encoder-decoders: a second model to put beside the live one
            yield Label("vs", classes="gen-name")
            yield FieldInput(versus.DEFAULT_PARTNER, placeholder="checkpoint folder or shipped toy", id="gen-vs",
                        compact=True)
            yield Button("Side by side v", id="gen-vs-go", compact=True)
        yield Static("", id="gen-note")
        with Horizontal(id="gen-body"):
            with Vertical(id="gen-out-box") as box:
                box.border_subtitle = "↓ ←/→ or mouse: a token's top-5"
                with VerticalScroll(id="gen-out-scroll") as scroll:
                    scroll.can_focus = False  # the completion itself takes focus, for its cursor
                    yield TokenStream(id="gen-out")
                with Horizontal(id="gen-probs-row"):  # the toggle beside the key to what it shows
                    yield OnOffCheckbox("probs y", False, id="gen-probs", compact=True)
                    yield Static(id="gen-legend")
                yield Static(id="gen-token-info")
            with Vertical(id="gen-att-box") as box:
                box.border_title = "attention of each new token over the context"  # the grid keeps every line
                yield Heatmap(id="gen-att")
        with Horizontal(id="gen-compare"):
            for mode in jobs.MODES:
                with VerticalScroll(classes="gen-mode", id=f"gen-box-{mode}") as box:
                    box.border_title = mode
                    yield Static("", id=f"gen-mode-{mode}")
        yield versus.VersusPanel(id="gen-versus")
        yield from self.compose_mechanism()

    def on_mount(self) -> None:
        self._note_model()
        self._draw_legend()

    # -- app hooks -----------------------------------------------------------------------------------
    def home(self) -> TokenStream:
        """The completion: g, m, v, s, y act at once, and its arrows walk the tokens (i: into the prompt)."""
        return self.query_one(TokenStream)

    def live_model_changed(self) -> None:
        self._note_model()
        self.mechanism_model_changed()

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Generate: stream the prompt", "g / enter in the prompt", self.action_generate),
                ("Generate: compare greedy, top-k, top-p, beam", "m", self.action_compare),
                ("Generate: the live model beside a second one (AT vs NAT)", "v", self.action_versus),
                ("Generate: stop", "s", self.action_stop),
                ("Generate: the logit lens of the prompt (layers x positions)", "l", self.action_lens),
                ("Generate: activation patching between two prompts", "p", self.action_patch),
                ("Generate: show token probabilities", "y", self.action_probs),
                ("Generate: a token's probability and top-5", "down, then left/right", self.action_focus_completion)]

    # -- settings ------------------------------------------------------------------------------------
    def form_defaults(self) -> GenerationSettings:
        """The view's own values, before any folder's (the base a folder's defaults go on)."""
        return GenerationSettings(max_new_tokens=int(self.field_defaults["max_new_tokens"]),
                                  temperature=float(self.field_defaults["temperature"]),
                                  beam_size=int(self.field_defaults["beam_size"]))

    def chat(self) -> bool:
        """The chat toggle is on, for a model that has a chat template."""
        return self.has_class("-chat") and self.query_one("#gen-chat", OnOffCheckbox).value

    def settings(self) -> GenerationSettings:
        """The form's values; ValueError naming the field when one is not a number or out of range."""
        values: dict[str, Any] = {}
        for title, name, _ in FIELDS:
            text = self.query_one(f"#gen-{name}", Input).value.strip()
            kind = float if name in ("temperature", "top_p") else int
            if (not text and name in OPTIONAL) or (name == "nat_length" and not self.has_class("-nat")):
                values[name] = None
                continue
            try:
                values[name] = kind(text)
            except ValueError:
                raise ValueError(f"{title} must be {'a number' if kind is float else 'an integer'}, got {text!r}") \
                    from None
        values["use_cache"] = self.query_one("#gen-cache", OnOffCheckbox).value
        return GenerationSettings(**values)  # the core's one check of the ranges

    # -- actions -------------------------------------------------------------------------------------
    @guarded
    def action_generate(self) -> None:
        s, model = self.settings(), self._model()
        prompt = self.query_one("#gen-prompt", Input).value
        self._begin()
        self.query_one("#gen-compare").remove_class("-shown")  # a single stream: the grid gets the room back
        self.query_one(versus.VersusPanel).remove_class("-shown")
        self.sampling = sampling_text(s)
        self.cut = s.beam_size == 1 and s.temperature > 0 and bool(s.top_k or s.top_p)
        self.query_one(TokenStream).start(stream_prefix(prompt, model.config.family, self.translating))
        self._describe()
        tokenizer, job, chat = self.app.live.tokenizer, self.job, self.chat()
        self.run_worker(lambda: jobs.stream_job(self, job, model, tokenizer, prompt, s, chat), thread=True,
                        group="generate", exclusive=True, exit_on_error=False)

    @guarded
    def action_compare(self) -> None:
        s, model = self.settings(), self._model()
        prompt = self.query_one("#gen-prompt", Input).value
        self._begin()
        self.results = {}
        self.query_one("#gen-compare").add_class("-shown")
        self.query_one(versus.VersusPanel).remove_class("-shown")
        for mode in jobs.MODES:  # its settings come under its text (a title at 80 columns is cut)
            self.query_one(f"#gen-mode-{mode}", Static).update("...")
        tokenizer, job, chat = self.app.live.tokenizer, self.job, self.chat()
        self.run_worker(lambda: jobs.compare_job(self, job, model, tokenizer, prompt, s, chat), thread=True,
                        group="generate", exclusive=True, exit_on_error=False)

    @guarded
    def action_versus(self) -> None:
        s, model = self.settings(), self._model()
        if model.config.family != "encoder-decoder":
            raise ValueError("side by side: the live model is decoder-only; it needs an encoder-decoder (AT or NAT)")
        if self.has_class("-hf"):
            raise ValueError("side by side: puts the lab's own AT and NAT models together, not a Hugging Face one")
        prompt, spec = self.query_one("#gen-prompt", Input).value, self.query_one("#gen-vs", Input).value
        self._begin()
        self.versus_done = set()
        self.query_one("#gen-compare").remove_class("-shown")
        panel = self.query_one(versus.VersusPanel)
        panel.add_class("-shown")
        panel.waiting()
        live, job = (model, self.app.live.tokenizer), self.job
        self.run_worker(lambda: versus.versus_job(self, job, live, spec, self.partners, prompt, s), thread=True,
                        group="generate", exclusive=True, exit_on_error=False)

    def _begin(self) -> None:
        """A new job. Focus stays where it is: after Enter in the prompt a person goes on typing there, and
        letters must reach the prompt, never the view's or the app's keys (the Stop button stops)."""
        self.job += 1
        self.running = True
        self.rows, self.row_labels = [], []
        self._only(None)  # a mechanism panel gives the completion its room back

    def action_stop(self) -> None:
        self.workers.cancel_group(self, "generate")
        self.running = False
        self.stop_mechanism()

    def action_probs(self) -> None:
        box = self.query_one("#gen-probs", OnOffCheckbox)
        box.value = not box.value

    def action_focus_completion(self) -> None:
        self.query_one(TokenStream).focus()

    @on(OnOffCheckbox.Changed, "#gen-probs")
    def _probs_changed(self, event: OnOffCheckbox.Changed) -> None:
        stream = self.query_one(TokenStream)
        if stream.show_probs != event.value:
            stream.toggle_probs()
        self._draw_legend()

    def _draw_legend(self) -> None:
        shown = self.query_one(TokenStream).show_probs
        text = legend() if shown else ""
        self.query_one("#gen-legend", Static).update(text)

    @on(TokenStream.CursorMoved)
    def _describe(self) -> None:
        self.query_one("#gen-token-info", Static).update(describe(self.query_one(TokenStream), self.sampling,
                                                                         self.cut))

    @on(Input.Submitted, "#gen-prompt")
    def _submitted(self) -> None:
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
