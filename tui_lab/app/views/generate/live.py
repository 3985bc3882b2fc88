"""How the Generate view follows the live model: its modes, the note over the completion, the prompt.

Plain functions of the live model the view calls when one arrives. A decoder-only model continues the prompt;
an encoder-decoder with a tokenizer translates it (the prompt is the source sentence); a NAT model decodes in
one pass and takes a length. The view's classes `-nat`, `-encdec`, `-translate`, `-hf` and `-chat`
(`LiveModes.classes`) show only the fields that apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content

from tui_lab.app.examples import SOURCE_TEXT, TOY_DE, numbers_pair
from tui_lab.app.origin import describe_origin
from tui_lab.app.views.generate.folder import folder_note
from tui_lab.generation.prompt import unknown_words

# A prompt the default model (the shipped English toy) continues with words; meta.json has its sample.
DEFAULT_PROMPT = "In the morning, Anna walked to"


@dataclass(frozen=True)
class LiveModes:
    """What the live model makes of the view: which fields and rows apply, and how the prompt is read."""

    nat: bool = False  # decodes in one pass and takes a length
    encdec: bool = False  # an encoder-decoder (the side by side applies)
    translating: bool = False  # an encoder-decoder with a tokenizer: the prompt is a source to translate
    hf: bool = False  # a Hugging Face translator: no partner for the side by side
    chat: bool = False  # a chat template and a tokenizer: the chat toggle applies

    def classes(self) -> dict[str, bool]:
        return {"-nat": self.nat, "-encdec": self.encdec, "-translate": self.translating, "-hf": self.hf,
                "-chat": self.chat}


def live_modes(live: Any) -> LiveModes:
    if not live.ready:
        return LiveModes()
    config, translating = live.model.config, translates(live)
    return LiveModes(
        nat=config.decoder_mode != "autoregressive", encdec=config.family == "encoder-decoder",
        translating=translating,
        # Side by side is the lab's AT vs NAT on its own toys; a Hugging Face translator has no partner there.
        hf=translating and describe_origin(live.origin).kind == "hf",
        chat=live.tokenizer is not None and getattr(live.model, "chat_template", None) is not None)


def ready_model(live: Any) -> Any:
    """The live model, for a job; ValueError saying why while it is not ready."""
    if not live.ready:
        raise ValueError(f"the live model is not ready yet ({live.status})")
    return live.model


def note_text(live: Any, modes: LiveModes, form: dict[str, Any]) -> Content:
    """The line over the completion: the model, its tokenizer, how it decodes, what its folder set (`form`).
    Plain text, never markup: a folder's path or a banned token ("[PAD]") would be read as a tag."""
    return Content(_note(live, modes, form))


def _note(live: Any, modes: LiveModes, form: dict[str, Any]) -> str:
    if not live.ready:
        return f"the live model is not ready ({live.status})"
    if live.tokenizer is None:
        text = (f"{live.origin}: no tokenizer, so the byte fallback (UTF-8 bytes mod the vocab); random weights "
                "make noise: train it (4) for words")
    elif modes.translating:
        text = (f"translates: type the source sentence, its translation streams token by token; "
                f"{live.tokenizer.kind} tokenizer, vocab {live.tokenizer.vocab_size}{banned_text(live)}")
    else:
        text = f"{live.origin}: {live.tokenizer.kind} tokenizer, vocab {live.tokenizer.vocab_size}"
    if modes.nat:
        text += f"; {live.model.config.decoder_mode}: one decoder pass"
    return text + folder_note(folder_of(live), form)


def folder_of(live: Any) -> Any:
    """The live model's folder generation defaults (a Hugging Face folder's), or None."""
    return getattr(live.model, "folder_generation", None) if live.ready else None


def start_len(live: Any, prompt: str) -> int:
    """What the decoder starts from, for a folder's max_length: the prompt's tokens, or an encoder-decoder's
    start token."""
    if not live.ready or live.config.family != "decoder-only" or live.tokenizer is None:
        return 1
    return max(1, len(live.tokenizer.encode(prompt)))


def followed_prompt(live: Any, translating: bool, prompt: str, previous: str = "") -> str:
    """An untouched prompt (a default, or `previous`, the one the view last set) follows the live model: a
    sentence to translate, or text to continue; a typed one stays."""
    if prompt not in (DEFAULT_PROMPT, SOURCE_TEXT, numbers_pair()[0], previous):
        return prompt
    return default_prompt(live, translating)


def translates(live: Any) -> bool:
    """An encoder-decoder with a tokenizer reads the prompt as a sentence to translate (random weights have
    only the byte fallback, which hashes text: nothing to translate)."""
    return live.ready and live.config.family == "encoder-decoder" and live.tokenizer is not None


def default_prompt(live: Any, translating: bool = True) -> str:
    """What the prompt starts as: a held-out source of the task the live model was trained on in this app (its
    words are the tokenizer's; a translator of numbers-de given 'I have seen the film today' read six <unk>);
    the shipped numbers-de toy its held-out number; any other translator seed 000's English sentence ('gesehen'
    <-> 'seen'); a language model the English toy's sample start."""
    if live.ready and live.example is not None:
        return live.example[0]
    if not translating:
        return DEFAULT_PROMPT
    return numbers_pair()[0] if live.config.name == TOY_DE else SOURCE_TEXT


def unknown_note(live: Any, prompt: str) -> Content:
    """'; the prompt's I have seen read <unk>: this tokenizer lacks them' ('' when it has every word)."""
    if not live.ready or live.tokenizer is None or getattr(live.config, "copy", False):
        return Content()  # a copy model points at a word it lacks and writes it: no <unk> in what it shows
    unknown = unknown_words(live.tokenizer, prompt)
    if not unknown:
        return Content()
    return Content.from_markup("; [b]the prompt's $words read <unk>[/]: this tokenizer lacks them",
                               words=" ".join(unknown))


def banned_text(live: Any) -> str:
    """'; never writes <pad>' for the tokens the folder's generation config bans (`model.banned_ids`)."""
    ids = list(getattr(live.model, "banned_ids", ()))
    return f"; never writes {' '.join(live.tokenizer.token_strings(ids))}" if ids else ""
