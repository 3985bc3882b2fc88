"""The Generate view's settings row: temperature, top-k, top-p, seed, beam, max tokens, NAT length, cache and chat.

The seed field seeds sampling: a number reproduces a run; left blank, each press draws a new seed (`draw_seed`),
which the completion's status line and the compare boxes name, so a draw worth keeping can be typed back in.

A widget the view asks for values (`settings`, `chat_on`) and hands each live model's folder defaults to
(`follow_folder`). Fields shown only for some models carry the classes `gen-at-only` and `gen-nat-only`, and the
chat toggle `gen-chat-only`; the view's mode classes (`-nat`, `-chat`) show them.
"""

from __future__ import annotations

import random
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label

from tui_lab.app.views.generate.folder import field_text, folder_form
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.generation.settings import GenerationSettings

FIELDS = (("temp", "temperature", "0.8"), ("top-k", "top_k", ""), ("top-p", "top_p", ""), ("seed", "seed", ""),
          ("beam", "beam_size", "1"), ("max", "max_new_tokens", "48"), ("nat-len", "nat_length", ""))
# Shown only for the models they apply to: a NAT model decodes in one pass (no beam, no cache) and takes a length.
ONLY_FOR = {"beam_size": "gen-at-only", "nat_length": "gen-nat-only"}
OPTIONAL = ("top_k", "top_p", "nat_length", "seed")  # empty means unset (a blank seed: a new draw each press)
DRAWN_SEEDS = 10_000  # a blank seed draws from 0..9999: four digits, which the 5-column field shows whole


def draw_seed() -> int:
    """A new seed for a press with the seed field blank (not torch's: the UI thread never imports it)."""
    return random.randrange(DRAWN_SEEDS)


class GenerationForm(Horizontal):
    """The fields, each `#gen-<name>`, the `#gen-cache` and `#gen-chat` toggles; what a folder set in them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.field_defaults = {name: value for _, name, value in FIELDS}
        self.folder_fields: dict[str, Any] = {}  # the fields a Hugging Face folder's defaults set (folder.py)
        self.beam_sample = False  # the folder samples its beams (do_sample with num_beams): no field, it follows
        self.seed_drawn = False  # the last settings() drew their seed (the field was blank)

    def compose(self) -> ComposeResult:
        for title, name, value in FIELDS:
            only = ONLY_FOR.get(name, "")
            yield Label(title, classes=f"gen-name {only}")
            yield FieldInput(value, id=f"gen-{name}", classes=f"gen-field {only}", compact=True)
        yield OnOffCheckbox("cache", True, id="gen-cache", compact=True, classes="gen-at-only")
        # A model with a chat template: the prompt is one user turn through it, as apply_chat_template renders it
        yield OnOffCheckbox("chat", False, id="gen-chat", compact=True, classes="gen-chat-only")

    def defaults(self) -> GenerationSettings:
        """The form's own values, before any folder's (the base a folder's defaults go on)."""
        return GenerationSettings(max_new_tokens=int(self.field_defaults["max_new_tokens"]),
                                  temperature=float(self.field_defaults["temperature"]),
                                  beam_size=int(self.field_defaults["beam_size"]))

    def chat_on(self) -> bool:
        return self.query_one("#gen-chat", OnOffCheckbox).value

    def settings(self, nat: bool) -> GenerationSettings:
        """The form's values (the NAT length only for a NAT model); ValueError naming the field when one is not a
        number or out of range."""
        values: dict[str, Any] = {}
        for title, name, _ in FIELDS:
            text = self.query_one(f"#gen-{name}", Input).value.strip()
            kind = float if name in ("temperature", "top_p") else int
            if (not text and name in OPTIONAL) or (name == "nat_length" and not nat):
                values[name] = None
                continue
            try:
                values[name] = kind(text)
            except ValueError:
                raise ValueError(f"{title} must be {'a number' if kind is float else 'an integer'}, got {text!r}") \
                    from None
        self.seed_drawn = values["seed"] is None
        values["seed"] = draw_seed() if self.seed_drawn else values["seed"]
        values["use_cache"] = self.query_one("#gen-cache", OnOffCheckbox).value
        values["beam_sample"] = self.beam_sample  # only with beams and temperature > 0 (GenerationSettings.mode)
        return GenerationSettings(**values)  # the core's one check of the ranges

    def follow_folder(self, folder: Any, start_len: int) -> dict[str, Any]:
        """A folder's proposals (its generation config, or None) into the form, the person's later edits winning;
        fields the previous folder set and nobody touched since go back to the form's own values. Returns what
        the folder set."""
        for name, text in self.folder_fields.items():
            if name == "use_cache":
                box = self.query_one("#gen-cache", OnOffCheckbox)
                box.value = True if box.value == text else box.value
            elif self.query_one(f"#gen-{name}", Input).value == text:
                self.query_one(f"#gen-{name}", Input).value = self.field_defaults[name]
        self.folder_fields = {}
        self.beam_sample = bool(folder is not None and folder.defaults.get("beam_sample"))
        form = folder_form(folder, self.defaults(), start_len)
        for name, value in form.items():
            if name == "use_cache":
                self.query_one("#gen-cache", OnOffCheckbox).value = value
                self.folder_fields[name] = value
            else:
                self.query_one(f"#gen-{name}", Input).value = self.folder_fields[name] = field_text(value)
        return form


def seed_text(s: GenerationSettings, drawn: bool) -> str:
    """'seed 4821, drawn (the seed field is blank)' or 'seed 7' where the run samples; '' where nothing is drawn
    (greedy, beam search)."""
    if s.mode not in ("sample", "beam-sample"):
        return ""
    return f"seed {s.seed}" + (", drawn (seed field blank: a new one each press)" if drawn else "")
