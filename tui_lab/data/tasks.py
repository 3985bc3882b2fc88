"""Seq2seq tasks for the encoder-decoder, word level, with a held-out split that is never trained on.

- `copy`, `reverse`: sequences of 3..10 symbol words (Greek letter names) to themselves or reversed.
  Both splits are fixed lists drawn once from `random.Random` seeded by task and seed: 500 distinct
  validation sequences, then 10,000 training sequences drawn the same way, skipping any whose source is
  a validation sequence. Fixed lists (rather than fresh samples every step) give a held-out set that is
  provably disjoint and the same `train`/`val` lists for every task.
- `numbers-de`: English number words to German ones for 0..999 (see `tui_lab.data.numbers`); the
  numbers are shuffled by the seed and 10% held out.
- `names`: greetings that carry a person's name across (see `tui_lab.data.names`); held-out names never
  occur in training nor in the vocabulary. Such a task keeps each pair's texts (`Seq2SeqTask.texts`):
  its pairs' ids hold <unk> where a word is out of the vocabulary, and batches also carry the extended
  ids the copy mechanism points with (`tui_lab.data.extended`).

Source and target share one word vocabulary (the 2017 model shares one embedding matrix), with
<pad> <bos> <eos> <unk> at ids 0..3. Pairs hold plain ids, no specials; `collate` adds them:
src (no bos/eos), tgt_in = bos + target, tgt_out = target + eos, right-padded with pad_id, except
tgt_out which holds IGNORE_INDEX on padding so the loss skips it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, fields

import torch
from torch import Tensor

from tui_lab.data import extended, names
from tui_lab.data.numbers import MAX_NUMBER, english_words, german_words
from tui_lab.data.tokenizers import Tokenizer, word_tokenizer

TASKS = ("copy", "reverse", "numbers-de", "names")
IGNORE_INDEX = -100  # torch's cross_entropy default
SPLITS = ("train", "val")
SYMBOLS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon"
).split()
SEQ_LEN_RANGE = (3, 10)
SYMBOL_TRAIN_SIZE = 10_000
SYMBOL_VAL_SIZE = 500
NUMBER_VAL_FRACTION = 0.1

Pair = tuple[list[int], list[int]]


@dataclass
class Seq2SeqBatch:
    """A padded batch. Masks are True on real tokens; tgt_mask covers tgt_in and tgt_out alike."""

    src: Tensor  # (N, S) long, pad_id on padding
    src_mask: Tensor  # (N, S) bool
    tgt_in: Tensor  # (N, T) long: bos, target..., pad_id on padding
    tgt_out: Tensor  # (N, T) long: target..., eos, IGNORE_INDEX on padding
    tgt_mask: Tensor  # (N, T) bool
    # Tasks with texts: the same in the example's extended vocabulary (out-of-vocabulary words as vocab + k)
    src_ext: Tensor | None = None  # (N, S) long
    tgt_ext: Tensor | None = None  # (N, T) long, IGNORE_INDEX on padding

    def to(self, device: torch.device | str) -> Seq2SeqBatch:
        moved = (getattr(self, f.name) for f in fields(self))
        return Seq2SeqBatch(*(t.to(device) if t is not None else None for t in moved))


@dataclass
class Seq2SeqTask:
    """A named task: its word tokenizer and fixed train / held-out val lists of (src_ids, tgt_ids)."""

    name: str
    tokenizer: Tokenizer
    train: list[Pair]
    val: list[Pair]
    # (source, target) text of every pair, per split, for tasks whose words go beyond the vocabulary
    texts: dict[str, list[tuple[str, str]]] | None = None

    def pairs(self, split: str) -> list[Pair]:
        if split not in SPLITS:
            raise ValueError(f"split: must be one of {', '.join(SPLITS)}, got {split!r}")
        return self.train if split == "train" else self.val

    def examples(self, split: str) -> list[tuple[str, str]]:
        if self.texts is not None:
            self.pairs(split)  # checks the split's name
            return list(self.texts[split])
        decode = self.tokenizer.decode
        return [(decode(src), decode(tgt)) for src, tgt in self.pairs(split)]

    @property
    def max_target_len(self) -> int:
        """Tokens a decoder must produce for the longest target, eos included (a generation limit)."""
        return max(len(tgt) for _, tgt in self.train + self.val) + 1

    def batch(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> Seq2SeqBatch:
        """`batch_size` pairs drawn uniformly with replacement from the split."""
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        pairs = self.pairs(split)
        index = torch.randint(len(pairs), (batch_size,), generator=generator).tolist()
        texts = [self.texts[split][i] for i in index] if self.texts is not None else None
        return collate([pairs[i] for i in index], self.tokenizer, texts)

    def batches(self, split: str, batch_size: int) -> Iterator[Seq2SeqBatch]:
        """The whole split in order (the last batch may be smaller): for evaluation."""
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        pairs = self.pairs(split)
        for start in range(0, len(pairs), batch_size):
            texts = self.texts[split][start : start + batch_size] if self.texts is not None else None
            yield collate(pairs[start : start + batch_size], self.tokenizer, texts)


def collate(pairs: list[Pair], tokenizer: Tokenizer, texts: list[tuple[str, str]] | None = None) -> Seq2SeqBatch:
    """Right-pad (src, tgt) pairs into a batch with bos/eos added to the target; with the pairs' texts, the
    extended ids too (the copy mechanism's targets)."""
    if not pairs:
        raise ValueError("pairs: cannot collate an empty list")
    sources = [src for src, _ in pairs]
    tgt_in = [[tokenizer.bos_id, *tgt] for _, tgt in pairs]
    tgt_out = [[*tgt, tokenizer.eos_id] for _, tgt in pairs]
    return Seq2SeqBatch(
        src=_pad(sources, tokenizer.pad_id),
        src_mask=_real(sources),
        tgt_in=_pad(tgt_in, tokenizer.pad_id),
        tgt_out=_pad(tgt_out, IGNORE_INDEX),
        tgt_mask=_real(tgt_in),
        **(_extended(texts, tokenizer) if texts is not None else {}),
    )


def _extended(texts: list[tuple[str, str]], tokenizer: Tokenizer) -> dict[str, Tensor]:
    """src_ext and tgt_ext of a batch (see tui_lab.data.extended), padded like src and tgt_out."""
    sources, targets = [], []
    for src_text, tgt_text in texts:
        src, oov = extended.source_ids(tokenizer, src_text)
        sources.append(src)
        targets.append([*extended.target_ids(tokenizer, tgt_text, oov), tokenizer.eos_id])
    return {"src_ext": _pad(sources, tokenizer.pad_id), "tgt_ext": _pad(targets, IGNORE_INDEX)}


def load_task(name: str, seed: int = 0) -> Seq2SeqTask:
    builders = {"copy": _symbol_task, "reverse": _symbol_task, "numbers-de": _numbers_task, "names": _names_task}
    if name not in builders:
        raise ValueError(f"task: unknown task {name!r}; choose one of {', '.join(TASKS)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed: must be an integer, got {seed!r}")
    return builders[name](name, seed)


def _symbol_task(name: str, seed: int) -> Seq2SeqTask:
    rng = random.Random(f"{name}:{seed}")  # a string seed hashes the same on every Python version
    val = _distinct_sequences(rng, SYMBOL_VAL_SIZE)
    held_out = set(val)
    train: list[tuple[str, ...]] = []
    while len(train) < SYMBOL_TRAIN_SIZE:
        seq = _random_sequence(rng)
        if seq not in held_out:
            train.append(seq)
    target = (lambda s: s) if name == "copy" else (lambda s: s[::-1])
    tokenizer = word_tokenizer(list(SYMBOLS))
    vocab = tokenizer.hf.get_vocab()

    def ids(seq: tuple[str, ...]) -> list[int]:
        return [vocab[w] for w in seq]

    return Seq2SeqTask(
        name, tokenizer, [(ids(s), ids(target(s))) for s in train], [(ids(s), ids(target(s))) for s in val]
    )


def _numbers_task(name: str, seed: int) -> Seq2SeqTask:
    numbers = list(range(MAX_NUMBER + 1))
    random.Random(f"{name}:{seed}").shuffle(numbers)
    n_val = round(len(numbers) * NUMBER_VAL_FRACTION)
    val, train = sorted(numbers[:n_val]), sorted(numbers[n_val:])
    texts = {n: (english_words(n), german_words(n)) for n in range(MAX_NUMBER + 1)}
    # English words first, then German, each in order of first use: a stable, readable vocabulary.
    words = [w for n in range(MAX_NUMBER + 1) for w in texts[n][0].split()]
    words += [w for n in range(MAX_NUMBER + 1) for w in texts[n][1].split()]
    tokenizer = word_tokenizer(words)

    def pair(n: int) -> Pair:
        return tokenizer.encode(texts[n][0]), tokenizer.encode(texts[n][1])

    return Seq2SeqTask(name, tokenizer, [pair(n) for n in train], [pair(n) for n in val])


def _names_task(name: str, seed: int) -> Seq2SeqTask:
    train, val, words = names.sentences(seed)
    tokenizer = word_tokenizer(words)  # template words and common names: no rare or held-out name

    def pair(texts: tuple[str, str]) -> Pair:
        return tokenizer.encode(texts[0]), tokenizer.encode(texts[1])

    pairs = {"train": [pair(t) for t in train], "val": [pair(t) for t in val]}
    return Seq2SeqTask(name, tokenizer, pairs["train"], pairs["val"], texts={"train": train, "val": val})


def _random_sequence(rng: random.Random) -> tuple[str, ...]:
    return tuple(rng.choices(SYMBOLS, k=rng.randint(*SEQ_LEN_RANGE)))


def _distinct_sequences(rng: random.Random, count: int) -> list[tuple[str, ...]]:
    seen: dict[tuple[str, ...], None] = {}  # a dict keeps the draw order
    while len(seen) < count:
        seen.setdefault(_random_sequence(rng), None)
    return list(seen)


def _pad(rows: list[list[int]], value: int) -> Tensor:
    """(N, max len) long, each row right-padded with `value`."""
    out = torch.full((len(rows), max(len(r) for r in rows)), value, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def _real(rows: list[list[int]]) -> Tensor:
    """(N, max len) bool, True on each row's own tokens."""
    lengths = torch.tensor([len(r) for r in rows])
    return torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
