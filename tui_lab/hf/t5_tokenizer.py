"""T5's sentencepiece tokenizer, read as transformers' AutoTokenizer reads a T5 folder (spiece.model or
tokenizer.json), with the lab's tokenizer interface.

transformers builds the tokenizer (its T5 converter turns spiece.model into a `tokenizers` Unigram model with
the 100 sentinels <extra_id_0..99> after the pieces, and </s> appended to every input); we keep its backend.
As in transformers: `encode(text)` is the source as the model reads it, pieces then </s>; the sentinels typed
in a text are read as sentinels. `encode_target` is a typed target without </s> (the Attention view's teacher
forcing). `decode` drops pad, </s> and <unk> as the lab's tokenizers do and keeps the sentinels: they are
what T5 writes (the spans it fills), where transformers' skip_special_tokens would drop them too.
The model's vocabulary may be larger than the tokenizer's (t5-small: 32,128 rows, 32,100 pieces): those ids
have no piece, generation never picks them (`vocab_limit`), and they still display, as `<id N>`.
ByT5 (bytes) and CodeT5 (a RoBERTa BPE) folders are refused in one line: neither is T5's sentencepiece.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_lab.data.tokenizers import Tokenizer
from tui_lab.errors import one_line

# tokenizer_config.json's tokenizer_class -> why the lab does not read it
REFUSED = {
    "ByT5Tokenizer": "ByT5 reads raw UTF-8 bytes",
    "RobertaTokenizer": "CodeT5 uses a RoBERTa byte-level BPE",
    "RobertaTokenizerFast": "CodeT5 uses a RoBERTa byte-level BPE",
}


class T5Tokenizer(Tokenizer):
    """transformers' T5 tokenizer backend plus the model's vocabulary size (ids past the pieces display)."""

    def __init__(self, hf: Any, pad_id: int, bos_id: int, eos_id: int, unk_id: int | None, model_vocab: int) -> None:
        super().__init__(hf, "bpe", pad_id, bos_id, eos_id, unk_id)
        self.hf.encode_special_tokens = False  # as AutoTokenizer: "<extra_id_0>" in a text is the sentinel
        self.model_vocab = model_vocab

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text, add_special_tokens=True).ids  # pieces, then </s>

    def describe(self) -> dict[str, Any]:
        """Who built it and whether a source starts with bos (`generate --json`'s tokenizer_used)."""
        return {"source": "transformers", "built_by": "transformers AutoTokenizer (T5's backend)",
                "bos": {"added": False, "why": "T5's tokenizer adds </s> at the end, no bos"}}

    def encode_target(self, text: str) -> list[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return super().decode([i for i in self._checked(ids) if i < self.vocab_size])

    def token_strings(self, ids: list[int]) -> list[str]:
        return [self._display(i) if i < self.vocab_size else f"<id {i}>" for i in self._checked(ids)]

    def _checked(self, ids: list[int]) -> list[int]:
        ids = [int(i) for i in ids]
        for i in ids:
            if not 0 <= i < max(self.model_vocab, self.vocab_size):
                raise ValueError(f"ids: {i} is outside the vocabulary (0..{self.model_vocab - 1})")
        return ids


def refusal(folder: Path) -> str | None:
    """Why this T5 folder's tokenizer is not read (ByT5, CodeT5), or None."""
    path = folder / "tokenizer_config.json"
    try:
        kind = json.loads(path.read_text(encoding="utf-8")).get("tokenizer_class") if path.is_file() else None
    except (OSError, ValueError, AttributeError) as err:
        raise ValueError(f"tokenizer_config.json: cannot read it ({one_line(err)})") from None
    if kind in REFUSED:
        return (f"tokenizer_config.json: tokenizer_class {kind} is not read here ({REFUSED[kind]}); the lab reads "
                "T5's sentencepiece tokenizer (spiece.model)")
    if kind is None and (folder / "merges.txt").is_file() and not (folder / "spiece.model").is_file():
        return "this T5 folder's tokenizer is a byte-level BPE (vocab.json + merges.txt, as CodeT5's); the lab " \
               "reads T5's sentencepiece tokenizer (spiece.model)"
    return None


def t5_tokenizer(folder: Path, hf: dict[str, Any], model_vocab: int) -> tuple[T5Tokenizer | None, str]:
    """(tokenizer, "") or (None, why); ValueError in one line for a tokenizer the lab refuses."""
    why = refusal(folder)
    if why:
        raise ValueError(why)
    if not (folder / "spiece.model").is_file() and not (folder / "tokenizer.json").is_file():
        return None, "no spiece.model or tokenizer.json"
    from tui_lab.hf.auto_tokenizer import quiet

    try:
        with quiet():  # offline, no remote code, no advisory messages (`auto_tokenizer.py`)
            from transformers import AutoTokenizer

            auto = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False, local_files_only=True)
    except ImportError:
        return None, "its tokenizer is sentencepiece (spiece.model), which needs the sentencepiece package"
    except Exception as err:  # noqa: BLE001 - transformers raises many kinds for a damaged file: one line
        raise ValueError(f"spiece.model: cannot read the T5 tokenizer ({one_line(err)})") from None
    backend = auto.backend_tokenizer
    if backend.get_vocab_size(with_added_tokens=True) > model_vocab:
        raise ValueError(f"the tokenizer has {backend.get_vocab_size(with_added_tokens=True)} tokens but "
                         f"config.json vocab_size is {model_vocab}")
    pad = _id(hf, "pad_token_id", auto.pad_token_id)
    eos = _id(hf, "eos_token_id", auto.eos_token_id)
    bos = _id(hf, "decoder_start_token_id", pad)  # T5's decoder starts from its pad token (0)
    return T5Tokenizer(backend, pad, bos, eos, auto.unk_token_id, model_vocab), ""


def _id(hf: dict[str, Any], key: str, fallback: int | None) -> int | None:
    value = hf.get(key)
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback
