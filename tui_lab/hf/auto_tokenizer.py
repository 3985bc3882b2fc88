"""A Hugging Face folder's tokenizer as transformers' AutoTokenizer builds it, with the lab's tokenizer interface.

Why transformers builds it: the stored tokenizer.json is not what transformers encodes with. transformers 5 rebuilds
a Llama tokenizer's pipeline from its vocabulary (`legacy: false` writes `<s>[INST]` where the stored file writes
`<s>▁[INST]`), rewrites the post-processor when tokenizer_config.json names add_bos_token, and takes special
tokens from tokenizer_config.json, special_tokens_map.json or the class's defaults (LlamaTokenizer's `<s>`).
Matching each rule by hand would be a copy of transformers that drifts; its result, the backend `tokenizers`
object, is what we keep (`TokenizersBackend` encodes by calling it directly).

AutoTokenizer runs offline (local_files_only), never with remote code (trust_remote_code=False), its advisory
logs and warnings silenced. Where it cannot build a tokenizer, `family_tokenizer` reads tokenizer.json as stored
and says why (`FolderTokenizer.source`).

A prompt gets the special tokens the post-processor adds (`encode_prompt`: Llama 3's <|begin_of_text|>, Llama 2's
<s>), as `AutoTokenizer(prompt)` does; a person's text stays literal ("<s>" typed is three characters).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer as HFTokenizer

from tui_lab.data.tokenizers import Tokenizer
from tui_lab.errors import one_line

TRANSFORMERS = "transformers"
LAB = "lab"


class FolderTokenizer(Tokenizer):
    """A folder's tokenizer: `encode` reads text alone (as every tokenizer of the lab), `encode_prompt` adds what
    the post-processor adds; `source` says who built it ("transformers" or "lab") and `chat_special` holds the
    special tokens by name a chat template sees."""

    def __init__(self, hf: HFTokenizer, ids: dict[str, int | None], source: str, built_by: str,
                 chat_special: dict[str, Any] | None = None, bos_config: bool | None = None,
                 kind: str = "bpe") -> None:
        super().__init__(hf, kind, ids["pad"], ids["bos"], ids["eos"], ids["unk"])
        self.source = source  # TRANSFORMERS or LAB
        self.built_by = built_by  # "transformers 5.24.0 LlamaTokenizer", or why the lab read the file itself
        self.chat_special = chat_special
        self.bos_config = bos_config  # tokenizer_config.json's add_bos_token, None when it names none

    def encode_prompt(self, text: str) -> list[int]:
        """The prompt's ids as AutoTokenizer(prompt) gives them: the text, then the post-processor's specials."""
        ids = self.hf.encode(text, add_special_tokens=True).ids
        if self.source == LAB and self.bos_config is not None and self.bos_id is not None:
            # transformers rewrites the post-processor when tokenizer_config.json names add_bos_token; the lab's
            # own reading keeps the file's, so it follows the named rule here (transformers' backend already does).
            starts = ids[:1] == [self.bos_id] and self.encode(text)[:1] != [self.bos_id]
            if self.bos_config and not starts:
                ids = [self.bos_id, *ids]
            elif not self.bos_config and starts:
                ids = ids[1:]
        return ids

    def bos_rule(self) -> dict[str, Any]:
        """Whether a prompt starts with bos, and why (for `generate --json` and `info --json`)."""
        probe = self.encode_prompt("a")
        added = bool(probe) and self.bos_id is not None and probe[0] == self.bos_id and \
            probe[:1] != self.encode("a")[:1]
        if self.bos_config is not None:
            why = f"tokenizer_config.json add_bos_token: {str(self.bos_config).lower()}"
        elif added:
            why = "the tokenizer's post-processor adds it (tokenizer.json)"
        else:
            why = "the tokenizer's post-processor adds no bos"
        return {"added": added, "why": why}

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "built_by": self.built_by, "bos": self.bos_rule()}


def auto_tokenizer(folder: Path) -> tuple[Any | None, str]:
    """(transformers' tokenizer, "") or (None, why in one line). Offline, no remote code, quiet."""
    try:
        with quiet():
            from transformers import AutoTokenizer

            auto = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False, local_files_only=True)
    except Exception as err:  # noqa: BLE001 - transformers raises many kinds for a folder it cannot read
        return None, f"transformers could not build it ({one_line(err)})"
    if getattr(auto, "backend_tokenizer", None) is None:  # a Python-only tokenizer: no `tokenizers` pipeline
        return None, f"transformers built {type(auto).__name__}, which has no tokenizers backend"
    return auto, ""


def from_auto(auto: Any, ids: dict[str, int | None], add_bos_named: bool | None) -> FolderTokenizer:
    """Our tokenizer on transformers' backend, with the special ids given (bos, eos, pad, unk)."""
    return FolderTokenizer(auto_backend(auto), _settled(ids), TRANSFORMERS, built_by(auto), chat_special(auto),
                           add_bos_named)


def auto_backend(auto: Any) -> HFTokenizer:
    """A copy of transformers' `tokenizers` pipeline (we set encode_special_tokens on ours), without truncation or
    padding, as transformers' __call__ without them sets it."""
    backend = HFTokenizer.from_str(auto.backend_tokenizer.to_str())
    backend.no_truncation()
    backend.no_padding()
    return backend


def built_by(auto: Any) -> str:
    import transformers

    return f"transformers {transformers.__version__} {type(auto).__name__}"


def chat_special(auto: Any) -> dict[str, Any]:
    """The special tokens by name, as apply_chat_template passes them to a template."""
    return {name: value for name, value in auto.special_tokens_map.items() if value is not None}


def _settled(ids: dict[str, int | None]) -> dict[str, int | None]:
    """eos stands in for a missing bos or pad, bos for a missing eos (the lab's decode needs both)."""
    eos = ids["eos"] if ids["eos"] is not None else ids["bos"]
    bos = ids["bos"] if ids["bos"] is not None else eos
    pad = ids["pad"] if ids["pad"] is not None else eos
    return {"bos": bos, "eos": eos, "pad": pad, "unk": ids["unk"]}


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """transformers' advisory logs and Python warnings held back while it loads (the lab says what matters)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from transformers.utils import logging as hf_logging  # sets up its root logger before we lower it

        level = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        try:
            yield
        finally:
            hf_logging.set_verbosity(level)


class _PromptEncoder:
    """A folder tokenizer seen by `generation.prompt.prompt_ids`: its `encode` is `encode_prompt`."""

    def __init__(self, codec: FolderTokenizer) -> None:
        self._codec = codec

    def encode(self, text: str) -> list[int]:
        return self._codec.encode_prompt(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._codec, name)


def prompt_encoder(codec: Any) -> Any:
    """What encodes a plain prompt: a folder tokenizer adds its post-processor's specials; any other codec is
    itself (the lab's own tokenizers add none)."""
    return _PromptEncoder(codec) if isinstance(codec, FolderTokenizer) else codec


def tokenizer_report(codec: Any) -> dict[str, Any]:
    """Which tokenizer encodes text, for `generate --json` and `info --from-hf --json`: who built it (transformers
    or the lab) and whether a plain prompt starts with bos, and why."""
    if hasattr(codec, "describe"):  # FolderTokenizer, T5Tokenizer
        return codec.describe()
    kind = getattr(codec, "kind", "byte")
    return {"source": LAB, "built_by": f"the lab's {kind} tokenizer",
            "bos": {"added": False, "why": f"the lab's {kind} tokenizer starts a prompt with no bos"}}


def prompt_bos(codec: Any, ids: list[int], chat: bool) -> dict[str, Any]:
    """Whether these prompt ids start with bos, and why: the chat template, the tokenizer's rule, or an empty
    prompt (which starts from bos)."""
    bos = getattr(codec, "bos_id", None)
    added = bool(ids) and bos is not None and ids[0] == bos
    if chat:
        return {"added": added, "why": "the chat template writes it" if added else "the chat template writes none"}
    rule = tokenizer_report(codec)["bos"]
    if added and not rule["added"]:
        return {"added": True, "why": "an empty prompt starts from bos"}
    return {"added": added, "why": rule["why"]}
