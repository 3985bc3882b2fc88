"""A Hugging Face folder's chat template, rendered as transformers' `apply_chat_template` renders it (no torch).

Where the template lives: `chat_template.jinja` (what transformers 5 writes), else `tokenizer_config.json`'s
`chat_template` (older folders: a string, or a list of named templates of which "default" is used). A template
is untrusted input from the Hub, so it runs in Jinja's sandbox (`ImmutableSandboxedEnvironment`, which refuses
attribute tricks and mutation), with the helpers transformers gives templates: `raise_exception`, a `tojson` that
does not escape HTML, `strftime_now`, and the special tokens by name (`bos_token`, `eos_token`...).
The rendered text is tokenized without adding special tokens, as `apply_chat_template(tokenize=True)` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tui_lab.errors import one_line

JINJA = "chat_template.jinja"
TOKENIZER_CONFIG = "tokenizer_config.json"
SPECIAL = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


@dataclass(frozen=True)
class ChatTemplate:
    source: str  # the template's text
    where: str  # "chat_template.jinja" or "tokenizer_config.json"
    special: dict[str, str] = field(default_factory=dict)  # bos_token -> "<s>", ... as tokenizer_config.json names them

    def render(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True) -> str:
        """The conversation as text; ValueError (one line naming the file) when the template fails."""
        import jinja2

        try:
            template = _environment().from_string(self.source)
            return template.render(messages=messages, add_generation_prompt=add_generation_prompt, tools=None,
                                   documents=None, **self.special)
        except jinja2.TemplateError as err:
            raise ValueError(f"{self.where}: the chat template failed ({one_line(err)})") from None


def read_chat_template(folder: Path) -> ChatTemplate | None:
    """The folder's template, or None when it has none; ValueError (one line) for an unreadable file."""
    config = _tokenizer_config(folder)
    special = {k: v for k, v in ((k, _token_text(config.get(k))) for k in SPECIAL) if v is not None}
    if (folder / JINJA).is_file():
        try:
            return ChatTemplate((folder / JINJA).read_text(encoding="utf-8"), JINJA, special)
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"{JINJA}: cannot read it ({one_line(err)})") from None
    raw = config.get("chat_template")
    if isinstance(raw, list):  # named templates: transformers uses "default"
        raw = next((t.get("template") for t in raw if isinstance(t, dict) and t.get("name") == "default"), None)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError(f"{TOKENIZER_CONFIG}: chat_template must be a string, got {type(raw).__name__}")
    return ChatTemplate(raw, TOKENIZER_CONFIG, special)


def chat_prompt_ids(model: Any, codec: Any, messages: list[dict[str, Any]], field: str = "--chat") -> list[int]:
    """A conversation's ids for a model (its `chat_template`, set by `hf.load`), ready to continue as the
    assistant; a one-line ValueError starting with `field` without a template or a tokenizer."""
    template = getattr(model, "chat_template", None)
    if template is None:
        raise ValueError(f"{field}: the model has no chat template ({JINJA} or {TOKENIZER_CONFIG}'s chat_template)")
    if getattr(codec, "hf", None) is None:
        raise ValueError(f"{field}: the model has no tokenizer of its own to encode the template's text")
    return encode_rendered(codec, template.render(messages))


def encode_rendered(codec: Any, text: str) -> list[int]:
    """Ids of a rendered conversation. The template writes special tokens (`<|eot|>`) that must become their ids,
    as transformers' tokenizer makes them; a person's own prompt text never does (`Tokenizer` encodes literally)."""
    hf = getattr(codec, "hf", None)
    if hf is None:
        return codec.encode(text)
    literal = hf.encode_special_tokens
    hf.encode_special_tokens = False
    try:
        return hf.encode(text, add_special_tokens=False).ids
    finally:
        hf.encode_special_tokens = literal


def _environment():
    """transformers' sandboxed environment for chat templates (`utils/chat_template_utils.py`), its helpers too."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
    return env


def _tokenizer_config(folder: Path) -> dict[str, Any]:
    path = folder / TOKENIZER_CONFIG
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{TOKENIZER_CONFIG}: cannot read it ({one_line(err)})") from None
    return data if isinstance(data, dict) else {}


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string, or an AddedToken dict with its content."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None
