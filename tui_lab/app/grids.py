"""Pure-Python grids the attention view draws without torch: tokens, masks, sinusoidal positions.

The masks follow the project's convention (True/1.0 = may attend) and are tested equal to
`tui_lab.model.masks`; the sinusoidal table is tested equal to `tui_lab.model.positions.sinusoidal_table`.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any

from tui_lab.mask_rule import may_attend


@dataclass(frozen=True)
class GridSpec:
    """One heatmap's data, ready for `Heatmap.set_grid` (NaN cells are blank, mask True = may not attend);
    the Attention view and the tour both draw from it."""

    title: str
    values: list[list[float]]
    rows: list[str]
    cols: list[str]
    mask: list[list[bool]] | None = None
    lo: float | None = None
    hi: float | None = None
    axes: tuple[str, str] = ("query", "key")
    row_notes: list[str] = field(default_factory=list)
    cursor: tuple[int, int] = (0, 0)


# Seed 002's padding example: a batch of three sentences of 4, 3 and 1 tokens.
SEED_BATCH = (("我", "喜欢", "机器", "学习"), ("我", "喜欢", "NLP"), ("你好",))
PAD = "<PAD>"
MAX_TOKENS = 256  # longer inputs are cut here so a capture stays a fraction of a second on a CPU


def hash_ids(words: list[str], vocab: int) -> list[int]:
    """A stable id per word (CRC32 mod vocab): the same word always maps to the same row of a random model."""
    return [zlib.crc32(w.encode("utf-8")) % vocab for w in words]


BOS_TEXT = "<bos>"


def tokenize(text: str, vocab: int, tokenizer: Any = None, target: bool = False) -> tuple[list[int], list[str]]:
    """(ids, display labels): the live tokenizer when the model has one, else whitespace words, hashed.

    A decoder input starts with the tokenizer's bos id, as in training (teacher forcing); a typed
    leading "<bos>" stands for it rather than being spelled out.
    """
    if tokenizer is not None:
        if target:
            text = text.strip().removeprefix(BOS_TEXT).lstrip()
        # A tokenizer with two sides (Marian's source.spm and target.spm) reads a target with its target side.
        encode = getattr(tokenizer, "encode_target", tokenizer.encode) if target else tokenizer.encode
        ids = ([tokenizer.bos_id] if target else []) + list(encode(text))
        return ids, list(tokenizer.token_strings(ids))
    words = text.split()
    return hash_ids(words, vocab), words


def causal_grid(n: int) -> list[list[float]]:
    """(n, n): query i sees keys 0..i."""
    return [[float(may_attend(q, k, causal=True)) for k in range(n)] for q in range(n)]


def padding_keep(lengths: list[int]) -> list[list[bool]]:
    """(N, L): True on the real tokens of each sequence."""
    width = max(lengths)
    return [[pos < n for pos in range(width)] for n in lengths]


def batch_grid(lengths: list[int], causal: bool) -> list[list[list[float]]]:
    """(N, L, L): no query attends to a padded key, AND (if causal) to a later position."""
    keep = padding_keep(lengths)
    width = max(lengths)
    return [[[float(keep[b][k] and may_attend(q, k, causal)) for k in range(width)] for q in range(width)]
            for b in range(len(lengths))]


def stacked_batch(causal: bool, batch: tuple[tuple[str, ...], ...] = SEED_BATCH):
    """The seed batch's (N, L, L) masks stacked into one grid with a blank row between sequences."""
    lengths = [len(s) for s in batch]
    width = max(lengths)
    grids = batch_grid(lengths, causal)
    rows, labels = [], []
    for b, sentence in enumerate(batch):
        padded = list(sentence) + [PAD] * (width - len(sentence))
        if b:
            rows.append([math.nan] * width)
            labels.append("")
        rows += grids[b]
        labels += [f"{b + 1}:{tok}" for tok in padded]
    cols = [f"k{i}" for i in range(width)]
    return rows, labels, cols


def sinusoidal_grid(length: int, d_model: int) -> list[list[float]]:
    """(L, E): PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    table = []
    for pos in range(length):
        row = []
        for dim in range(d_model):
            angle = pos / 10000 ** ((dim - dim % 2) / d_model)
            row.append(math.sin(angle) if dim % 2 == 0 else math.cos(angle))
        table.append(row)
    return table


EOS_TEXT = "<eos>"


def predicted_labels(decoder_inputs: list[str], tokenizer: Any = None) -> list[str]:
    """What each decoder query predicts under teacher forcing: the next input, and eos after the last."""
    eos = EOS_TEXT
    if tokenizer is not None and getattr(tokenizer, "eos_id", None) is not None:
        eos = tokenizer.token_strings([tokenizer.eos_id])[0]
    return [*decoder_inputs[1:], eos] if decoder_inputs else []
