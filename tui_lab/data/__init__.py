"""Tokenizers and data for the training engine: no downloads, ever.

- `tokenizers`: one `Tokenizer` class over HF `tokenizers` (char, byte-level BPE, word, GPT-2).
- `corpus`: the built-in generated English corpus and a reader for a user's UTF-8 file.
- `lm`: a token stream split into train/val, read as random windows of seq_len + 1.
- `tasks`: word-level seq2seq tasks (copy, reverse, numbers-de, names) with held-out splits.
"""

from __future__ import annotations

import importlib
from typing import Any

# Names load on first use: importing one torch-free submodule (masking, tokenizers) from the app must not
# pull torch in through `lm` before the first frame.
_HOMES = {
    "builtin_corpus": "corpus", "read_text": "corpus",
    "LMData": "lm", "lm_data": "lm",
    "IGNORE_INDEX": "tasks", "TASKS": "tasks", "Seq2SeqBatch": "tasks", "Seq2SeqTask": "tasks",
    "collate": "tasks", "load_task": "tasks",
    "Tokenizer": "tokenizers", "bpe_tokenizer": "tokenizers", "char_tokenizer": "tokenizers",
    "load_tokenizer": "tokenizers", "word_tokenizer": "tokenizers",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'tui_lab.data' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tui_lab.data.{_HOMES[name]}"), name)


__all__ = [
    "IGNORE_INDEX",
    "TASKS",
    "LMData",
    "Seq2SeqBatch",
    "Seq2SeqTask",
    "Tokenizer",
    "bpe_tokenizer",
    "builtin_corpus",
    "char_tokenizer",
    "collate",
    "lm_data",
    "load_task",
    "load_tokenizer",
    "read_text",
    "word_tokenizer",
]
