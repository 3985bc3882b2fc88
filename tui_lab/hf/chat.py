"""A Hugging Face folder's chat template, rendered as transformers' `apply_chat_template` renders it (no torch).

Where the template lives: `chat_template.jinja` (what transformers 5 writes), else `tokenizer_config.json`'s
`chat_template` (older folders: a string, or a list of named templates of which "default" is used). A template
is untrusted input from the Hub, so it runs in Jinja's sandbox with transformers' environment, in a child process
bounded in size, memory and time (`chat_sandbox.py`; one line when a template passes a bound). The special
tokens are passed by name (`bos_token`, `eos_token`...) as the folder's tokenizer names them: transformers'
`special_tokens_map`, which reads tokenizer_config.json, special_tokens_map.json and the tokenizer class's
defaults (`auto_tokenizer.py`), else tokenizer_config.json alone.
The rendered text is tokenized without adding special tokens, as `apply_chat_template(tokenize=True)` does.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui_lab.errors import one_line

JINJA = "chat_template.jinja"
TOKENIZER_CONFIG = "tokenizer_config.json"
SPECIAL = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
WALL_SECONDS = 10  # the child's whole life, its start included (it also stops itself after 5 s of CPU)


@dataclass(frozen=True)
class ChatTemplate:
    source: str  # the template's text
    where: str  # "chat_template.jinja" or "tokenizer_config.json"
    special: dict[str, Any] = field(default_factory=dict)  # bos_token -> "<s>", ... as the tokenizer names them

    def render(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True) -> str:
        """The conversation as text; ValueError (one line naming the file) when the template fails or passes a
        bound (`chat_sandbox.py`)."""
        # As apply_chat_template: a message's None values are dropped (templates test for missing keys).
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        variables = {**self.special, "messages": messages, "add_generation_prompt": add_generation_prompt,
                     "tools": None, "documents": None}
        out = _run_sandbox({"source": self.source, "variables": variables})
        if "error" in out:
            raise ValueError(f"{self.where}: the chat template failed ({out['error']})")
        return out["text"]

    def with_special(self, special: dict[str, Any] | None) -> ChatTemplate:
        """The same template given the tokenizer's special tokens (they win over tokenizer_config.json's)."""
        return self if not special else replace(self, special={**self.special, **special})


def _run_sandbox(job: dict[str, Any]) -> dict[str, Any]:
    """{"text": ...} or {"error": ...} from a child process that renders with bounds (`chat_sandbox.py`)."""
    from tui_lab.hf import chat_sandbox

    try:
        done = subprocess.run([sys.executable, "-I", chat_sandbox.__file__], input=json.dumps(job),
                              capture_output=True, text=True, encoding="utf-8", timeout=WALL_SECONDS)
    except subprocess.TimeoutExpired:
        return {"error": f"it ran past {WALL_SECONDS} s"}
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:  # killed by its limits before it could answer (SIGXCPU, SIGKILL)
        if done.returncode in (-getattr(signal, "SIGKILL", 9), -getattr(signal, "SIGXCPU", 24)):  # past a cap
            return {"error": f"it ran past its bounds ({chat_sandbox.CPU_SECONDS} s of CPU, "
                             f"{chat_sandbox.MEMORY_BYTES >> 20} MiB)"}
        return {"error": f"it stopped without an answer (exit {done.returncode})"}


def read_chat_template(folder: Path, special: dict[str, Any] | None = None) -> ChatTemplate | None:
    """The folder's template, or None when it has none; ValueError (one line) for an unreadable file. `special`:
    the tokenizer's special tokens by name (`FolderTokenizer.chat_special`), else tokenizer_config.json's."""
    config = _tokenizer_config(folder)
    named = {k: v for k, v in ((k, _token_text(config.get(k))) for k in SPECIAL) if v is not None}
    special = special if special is not None else named
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
