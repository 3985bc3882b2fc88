"""Side by side in the Generate view: the live model and a second one on the same prompt (AT vs NAT).

NAT and AT are two trained models (a NAT decoder has no causal mask and never learned to read its own
tokens, so running it autoregressively would show nothing true). The second model is named in the view's
`vs` field: a checkpoint folder, or a shipped toy (by default `transformer-2017-toy-numbers-de`, the AT
numbers-de toy, so a NAT model trained on numbers-de meets its AT twin with no setup). Both decode greedily
with the core's loop (`generation.session.complete`); each box says the decoder mode, the decoder passes,
the time and, for NAT, the length it decoded and the classifier's prediction. Loading the second model and
decoding both run in a thread worker; the loaded model is kept until the field names another. Each box's text
is a `ModelText` (folded one cell short of the border, widgets/model_text.py), as in the compare boxes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.worker import get_current_worker

from tui_lab.app.views.generate import jobs
from tui_lab.app.widgets.model_text import ModelText, drawable
from tui_lab.config import is_nat
from tui_lab.errors import one_line
from tui_lab.generation.settings import GenerationSettings
from tui_lab.served import page_path

DEFAULT_PARTNER = "transformer-2017-toy-numbers-de"
SIDES = ("live", "vs")


class VersusResult(Message):
    def __init__(self, job: int, side: str, title: str, text: str, detail: str) -> None:
        super().__init__()
        self.job, self.side, self.title, self.text, self.detail = job, side, title, text, detail


class VersusPanel(Horizontal):
    """Two boxes, the live model's output and the second model's, each with how it was made; `partners` keeps
    the second model loaded, once per `vs` text (the job loads it, and fills the dict)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partners: dict[str, Any] = {}
        self.done: set[str] = set()  # the sides shown so far

    def compose(self) -> ComposeResult:
        for side in SIDES:
            with VerticalScroll(classes="gen-mode", id=f"gen-vs-box-{side}"):
                yield ModelText("", id=f"gen-vs-out-{side}")

    def waiting(self) -> None:
        self.done = set()
        for side in SIDES:
            self.query_one(f"#gen-vs-box-{side}").border_title = side
            self.query_one(f"#gen-vs-out-{side}", ModelText).update("...")

    def stopped(self) -> None:
        """s before both sides were in: the side still to come says so (its job posts nothing more)."""
        for side in SIDES:
            if side not in self.done:
                self.query_one(f"#gen-vs-out-{side}", ModelText).update(jobs.STOPPED)

    def show(self, result: VersusResult) -> bool:
        """One side's text and how it was made; True once both sides are in."""
        self.query_one(f"#gen-vs-box-{result.side}").border_title = result.title
        self.query_one(f"#gen-vs-out-{result.side}", ModelText).update(
            Content.from_markup("$text\n[dim]$detail[/]", text=drawable(result.text), detail=result.detail))
        self.done.add(result.side)
        return self.done == set(SIDES)


def refusal(model: Any, hf: bool) -> str:
    """Why the live model cannot go beside a second one, or "": side by side puts the lab's own encoder-decoders
    together (`hf`: a Hugging Face translator, which has no partner among the lab's toys)."""
    if model.config.family != "encoder-decoder":
        return f"v puts two encoder-decoders side by side (AT and NAT); the live model is {model.config.family}"
    if hf:
        return "v puts the lab's own AT and NAT models side by side, not a Hugging Face one"
    return ""


def load_partner(spec: str, device: Any) -> Any:
    """The second model: a checkpoint folder, else a preset or shipped toy by name (ValueError naming `vs`)."""
    from tui_lab.loading import load_model

    spec = spec.strip()
    if not spec:
        raise ValueError("vs: give a checkpoint folder or a shipped toy's name to put beside the live model")
    folder = page_path(spec, "vs")  # served: only a folder inside the session's own
    try:
        loaded = load_model("checkpoint", folder, device) if folder.is_dir() else load_model("preset", spec, device)
    except ValueError as err:
        raise ValueError(f"vs: {one_line(err)}") from None
    if loaded.config.family != "encoder-decoder":
        raise ValueError(f"vs: {spec} is {loaded.config.family}; side by side needs an encoder-decoder")
    return loaded


def versus_job(poster: Any, job: int, live: tuple[Any, Any], spec: str, kept: dict[str, Any], prompt: str,
               s: GenerationSettings) -> None:
    """Decode `prompt` with the live model, then with the one `spec` names (worker thread)."""
    try:
        model, tokenizer = live
        if spec.strip() not in kept:
            kept.clear()  # one second model at a time
            kept[spec.strip()] = load_partner(spec, str(next(model.parameters()).device))
        partner = kept[spec.strip()]
        stopped = lambda: get_current_worker().is_cancelled  # noqa: E731
        for side, (side_model, side_tokenizer, label) in (("live", (model, tokenizer, "")),
                                                          ("vs", (partner.model, partner.tokenizer, partner.label))):
            result = _decode(job, side, side_model, side_tokenizer, prompt, s, label, stopped)
            if stopped():  # s: the side still to come says "stopped" (VersusPanel.stopped)
                return
            poster.post_message(result)
    except Exception as err:  # noqa: BLE001 - a bad folder, prompt or setting is a message, never a crash
        poster.post_message(jobs.GenerateFailed(job, one_line(err)))


def _decode(job: int, side: str, model: Any, tokenizer: Any, prompt: str, s: GenerationSettings,
            label: str = "", should_stop: Any = None) -> VersusResult:
    from tui_lab.generation.session import complete

    config = model.config
    greedy = replace(s, temperature=0.0, top_k=None, top_p=None, beam_size=1,
                     nat_length=s.nat_length if is_nat(config) else None)
    codec, _ = jobs.codec_for(model, tokenizer)
    done = complete(model, codec, jobs.encode_prompt(model, codec, prompt), greedy, should_stop=should_stop)
    title = f"{side}: {config.decoder_mode}" + (f" ({label})" if label else "")
    return VersusResult(job, side, title, codec.decode(done.ids) or "(empty)", describe(done))


def describe(done: Any) -> str:
    """`1 decoder pass, 3.1 ms` and for NAT a second line `length 4 predicted, 6 decoded` (narrow boxes at 80)."""
    lines = [f"{done.decoder_passes} decoder pass{'es' if done.decoder_passes != 1 else ''}, "
             f"{done.seconds * 1000:.1f} ms"]
    nat = []
    if done.predicted_length is not None:
        nat.append(f"length {done.predicted_length} predicted")
    if done.nat_begins is not None and done.nat_begins != done.predicted_length:
        nat.append(f"{done.nat_begins} decoded")
    return "\n".join(lines + ([", ".join(nat)] if nat else []))
