"""Tokenizers and data for the training engine: no downloads, ever.

- `tokenizers`: one `Tokenizer` class over HF `tokenizers` (char, byte-level BPE, word, GPT-2).
- `corpus`: the built-in generated English corpus and a reader for a user's UTF-8 file.
- `lm`: a token stream split into train/val, read as random windows of seq_len + 1.
- `tasks`: word-level seq2seq tasks (copy, reverse, numbers-de, names) with held-out splits.
"""

from __future__ import annotations

from tui_lab.data.corpus import builtin_corpus, read_text
from tui_lab.data.lm import LMData, lm_data
from tui_lab.data.tasks import IGNORE_INDEX, TASKS, Seq2SeqBatch, Seq2SeqTask, collate, load_task
from tui_lab.data.tokenizers import Tokenizer, bpe_tokenizer, char_tokenizer, load_tokenizer, word_tokenizer

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
