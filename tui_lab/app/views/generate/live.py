"""How the Generate view follows the live model: its mode classes, the note over the completion, the prompt.

A mixin of GenerateView (a Textual widget). A decoder-only model continues the prompt; an encoder-decoder
with a tokenizer translates it (the prompt is the source sentence); a NAT model decodes in one pass and
takes a length. The classes `-nat`, `-encdec`, `-translate` and `-hf` show only the fields that apply.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Button, Input, Static

from tui_lab.app.examples import SOURCE_TEXT, TOY_DE, numbers_pair
from tui_lab.app.origin import describe_origin
from tui_lab.app.views.generate.folder import field_text, folder_form, folder_note
from tui_lab.app.widgets.toggle import OnOffCheckbox

# A prompt the default model (the shipped English toy) continues with words; meta.json has its sample.
DEFAULT_PROMPT = "In the morning, Anna walked to"


class GenerateLiveModel:
    def _note_model(self) -> None:
        live = self.app.live
        config = live.model.config if live.ready else None
        self.set_class(config is not None and config.decoder_mode != "autoregressive", "-nat")
        self.set_class(config is not None and config.family == "encoder-decoder", "-encdec")
        self.translating = translates(live)
        self.set_class(self.translating, "-translate")
        # Side by side is the lab's AT vs NAT on its own toys; a Hugging Face translator has no partner there.
        self.set_class(self.translating and describe_origin(live.origin).kind == "hf", "-hf")
        # A chat model (a Hugging Face folder with a chat template and a tokenizer) gets the chat toggle.
        self.set_class(live.ready and live.tokenizer is not None and getattr(live.model, "chat_template", None)
                       is not None, "-chat")
        self._default_prompt()
        form = self._folder_defaults(live)
        self.query_one("#gen-go", Button).label = "Translate g" if self.translating else "Generate g"
        if not live.ready:
            text = f"the live model is not ready ({live.status})"
        elif live.tokenizer is None:
            text = (f"{live.origin}: no tokenizer, so the byte fallback (UTF-8 bytes mod the vocab); random weights "
                    "make noise: train it (4) for words")
        elif self.translating:
            text = (f"translates: type the source sentence, its translation streams token by token; "
                    f"{live.tokenizer.kind} tokenizer, vocab {live.tokenizer.vocab_size}{banned_text(live)}")
        else:
            text = f"{live.origin}: {live.tokenizer.kind} tokenizer, vocab {live.tokenizer.vocab_size}"
        if config is not None and self.has_class("-nat"):
            text += f"; {config.decoder_mode}: one decoder pass"
        if live.ready:
            text += folder_note(getattr(live.model, "folder_generation", None), form)
        self.query_one("#gen-note", Static).update(text)

    def _folder_defaults(self, live: Any) -> dict[str, Any]:
        """The folder's proposals into the form (the person's later edits win); fields the previous folder set
        and nobody touched since go back to the view's own values. Returns what the folder set."""
        for name, text in self.folder_fields.items():
            if name == "use_cache":
                box = self.query_one("#gen-cache", OnOffCheckbox)
                box.value = True if box.value == text else box.value
            elif self.query_one(f"#gen-{name}", Input).value == text:
                self.query_one(f"#gen-{name}", Input).value = self.field_defaults[name]
        self.folder_fields = {}
        folder = getattr(live.model, "folder_generation", None) if live.ready else None
        form = folder_form(folder, self.form_defaults(), self._start_len(live))
        for name, value in form.items():
            if name == "use_cache":
                self.query_one("#gen-cache", OnOffCheckbox).value = value
                self.folder_fields[name] = value
            else:
                self.query_one(f"#gen-{name}", Input).value = self.folder_fields[name] = field_text(value)
        return form

    def _start_len(self, live: Any) -> int:
        """What the decoder starts from, for a folder's max_length: the prompt's tokens, or an encoder-decoder's
        start token."""
        if not live.ready or live.config.family != "decoder-only" or live.tokenizer is None:
            return 1
        return max(1, len(live.tokenizer.encode(self.query_one("#gen-prompt", Input).value)))

    def _default_prompt(self) -> None:
        """An untouched prompt follows the live model: a sentence to translate, or text to continue."""
        prompt = self.query_one("#gen-prompt", Input)
        if prompt.value in (DEFAULT_PROMPT, SOURCE_TEXT, numbers_pair()[0]):
            prompt.value = default_prompt(self.app.live) if self.translating else DEFAULT_PROMPT

    def _model(self) -> Any:
        live = self.app.live
        if not live.ready:
            raise ValueError(f"the live model is not ready yet ({live.status})")
        return live.model


def translates(live: Any) -> bool:
    """An encoder-decoder with a tokenizer reads the prompt as a sentence to translate (random weights have
    only the byte fallback, which hashes text: nothing to translate)."""
    return live.ready and live.config.family == "encoder-decoder" and live.tokenizer is not None


def default_prompt(live: Any) -> str:
    """What a translator starts with: the shipped numbers-de toy its held-out number (the words it knows),
    any other seed 000's English sentence, 'I have seen the film today' (the 'gesehen' <-> 'seen' one)."""
    return numbers_pair()[0] if live.config.name == TOY_DE else SOURCE_TEXT


def banned_text(live: Any) -> str:
    """'; never writes <pad>' for the tokens the folder's generation config bans (`model.banned_ids`)."""
    ids = list(getattr(live.model, "banned_ids", ()))
    return f"; never writes {' '.join(live.tokenizer.token_strings(ids))}" if ids else ""
