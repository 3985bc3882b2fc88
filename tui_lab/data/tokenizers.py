"""Tokenizers for the lab, all built on Hugging Face `tokenizers` (no hand-written BPE).

One class, `Tokenizer`, wraps any `tokenizers.Tokenizer` plus the ids of its special tokens, so the
character, byte-level BPE, word and GPT-2 tokenizers share one interface and one file format:
`folder/tokenizer.json` (HF's own) and `folder/tokenizer_meta.json` (kind and special ids).

Policies, the same for every kind:
- `encode(text)` reads text literally: a literal "<eos>" in a user's file is encoded as its characters,
  never as the special token. Special ids only enter a sequence when code puts them there.
- `decode(ids)` drops special tokens.
- A model may have more output rows than the tokenizer has tokens (a Hugging Face checkpoint padded to a
  multiple of 64): `model_vocab` says how many, and ids past the tokenizer then decode to nothing, as
  transformers' decode skips them, and display as `<id N>`. Generation may choose them, as transformers' does.
- Text the vocabulary lacks maps to `<unk>` where the kind has one (char, word); `unknown(text)` lists
  what would, so a caller can say so. Byte-level BPE covers every byte and has no `<unk>`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from tokenizers import Regex, decoders, models, pre_tokenizers, trainers
from tokenizers import Tokenizer as HFTokenizer

from tui_lab.checkpoint_files import TOKENIZER_FILES
from tui_lab.errors import one_line

KINDS = ("char", "bpe", "word", "gpt2")
PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
TOKENIZER_FILE, META_FILE = TOKENIZER_FILES  # a checkpoint's tokenizer/ holds these two, nothing else
META_FORMAT = 1
# Grid axes show whitespace as visible marks; otherwise a space token is an empty-looking label.
_VISIBLE = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"})


class Tokenizer:
    """Any HF tokenizer plus its special ids; encodes literally, decodes without specials."""

    def __init__(
        self, hf: HFTokenizer, kind: str, pad_id: int, bos_id: int, eos_id: int, unk_id: int | None = None
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind: must be one of {', '.join(KINDS)}, got {kind!r}")
        self.hf = hf
        self.kind = kind
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = pad_id, bos_id, eos_id, unk_id
        for name, value in self.special_ids_by_name().items():
            if value is not None and not 0 <= value < self.vocab_size:
                raise ValueError(f"{name}: {value} is outside the vocabulary (0..{self.vocab_size - 1})")
        # Not stored in tokenizer.json, so it is set here on every construction, load included.
        self.hf.encode_special_tokens = True
        self.model_vocab: int | None = None  # the model's rows when more than the tokenizer's (`hf.load` sets it)

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size(with_added_tokens=True)

    def special_ids_by_name(self) -> dict[str, int | None]:
        return {"pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id, "unk_id": self.unk_id}

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(i for i in self.special_ids_by_name().values() if i is not None)

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        ids = self._checked(ids)
        size = self.vocab_size
        return self.hf.decode([i for i in ids if i not in self.special_ids and i < size], skip_special_tokens=False)

    def token_strings(self, ids: list[int]) -> list[str]:
        """One display string per id: specials by name, whitespace made visible, partial bytes as \\xNN, an id
        past the tokenizer (a padded model's row) as `<id N>`."""
        size = self.vocab_size
        return [self._display(i) if i < size else f"<id {i}>" for i in self._checked(ids)]

    def unknown(self, text: str) -> list[str]:
        """The characters (char) or words (word) of `text` that would map to <unk>, each once, in order."""
        if self.unk_id is None:
            return []
        enc = self.hf.encode(text, add_special_tokens=False)
        pieces = [text[start:end] for i, (start, end) in zip(enc.ids, enc.offsets, strict=True) if i == self.unk_id]
        return list(dict.fromkeys(pieces))

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.hf.save(str(folder / TOKENIZER_FILE))
        meta = {"format": META_FORMAT, "kind": self.kind, **self.special_ids_by_name()}
        (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path) -> Tokenizer:
        folder = Path(folder)
        for name in (TOKENIZER_FILE, META_FILE):
            if not (folder / name).is_file():
                raise ValueError(f"tokenizer: {folder} has no {name}")
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            hf = HFTokenizer.from_file(str(folder / TOKENIZER_FILE))
        except Exception as exc:  # HF raises a bare Exception for a malformed file
            raise ValueError(f"tokenizer: cannot read {folder}: {one_line(exc)}") from None
        if meta.get("format") != META_FORMAT:
            raise ValueError(f"tokenizer: {META_FILE} format {meta.get('format')!r} is not {META_FORMAT}")
        return cls(hf, meta["kind"], meta["pad_id"], meta["bos_id"], meta["eos_id"], meta.get("unk_id"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable HF object inside

    def __repr__(self) -> str:
        return f"Tokenizer(kind={self.kind!r}, vocab_size={self.vocab_size})"

    def _key(self) -> tuple:
        return (self.kind, *self.special_ids_by_name().values(), self.hf.to_str())

    def _checked(self, ids: list[int]) -> list[int]:
        ids = [int(i) for i in ids]  # accepts tensors' elements and numpy ints
        limit = max(self.vocab_size, self.model_vocab or 0)
        for i in ids:
            if not 0 <= i < limit:
                raise ValueError(f"ids: {i} is outside the vocabulary (0..{limit - 1})")
        return ids

    def _display(self, token_id: int) -> str:
        if token_id in self.special_ids:
            return self.hf.id_to_token(token_id)
        text = self.hf.decode([token_id], skip_special_tokens=False)
        if "\ufffd" in text and self.kind in ("bpe", "gpt2"):
            # A piece of a multi-byte character: show its bytes rather than a replacement mark.
            raw = bytes(_unicode_to_byte()[c] for c in self.hf.id_to_token(token_id))
            text = raw.decode("utf-8", errors="backslashreplace")
        return text.translate(_VISIBLE)


def char_tokenizer(text: str) -> Tokenizer:
    """Every distinct character of `text`, after <pad> <bos> <eos> <unk> (ids 0..3), in sorted order."""
    vocab = {token: i for i, token in enumerate((PAD, BOS, EOS, UNK))}
    for char in sorted(set(text)):
        vocab.setdefault(char, len(vocab))
    hf = HFTokenizer(models.WordLevel(vocab, unk_token=UNK))
    # One pre-token per code point (newlines included); Fuse joins them back without separators.
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    hf.decoder = decoders.Fuse()
    hf.add_special_tokens([PAD, BOS, EOS, UNK])
    return Tokenizer(hf, "char", 0, 1, 2, 3)


def bpe_tokenizer(text: str, vocab_size: int) -> Tokenizer:
    """Byte-level BPE trained on `text` to exactly `vocab_size` tokens (<pad> <bos> <eos> are 0..2)."""
    minimum = 256 + 3  # the byte alphabet plus the specials: merges come on top of these
    if vocab_size < minimum:
        raise ValueError(f"vocab: byte-level BPE needs at least {minimum} (256 bytes + 3 specials), got {vocab_size}")
    hf = HFTokenizer(models.BPE())
    # No prefix space: encode/decode must round-trip the text exactly.
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=0,
        show_progress=False,
    )
    hf.train_from_iterator([text], trainer)
    reached = hf.get_vocab_size(with_added_tokens=True)
    if reached != vocab_size:
        raise ValueError(f"vocab: this text supports at most {reached} BPE tokens, asked for {vocab_size}")
    return Tokenizer(hf, "bpe", 0, 1, 2, None)


def word_tokenizer(words: list[str]) -> Tokenizer:
    """Whitespace-separated words: <pad> <bos> <eos> <unk> (ids 0..3), then `words` in order, once each."""
    vocab = {token: i for i, token in enumerate((PAD, BOS, EOS, UNK))}
    for word in words:
        if not word or any(c.isspace() for c in word):
            raise ValueError(f"words: each word must be non-empty without whitespace, got {word!r}")
        vocab.setdefault(word, len(vocab))
    hf = HFTokenizer(models.WordLevel(vocab, unk_token=UNK))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # No decoder: HF joins word tokens with single spaces, which is what a word vocabulary wants.
    hf.add_special_tokens([PAD, BOS, EOS, UNK])
    return Tokenizer(hf, "word", 0, 1, 2, 3)


def load_tokenizer(folder: str | Path) -> Tokenizer:
    return Tokenizer.load(folder)


@lru_cache(maxsize=1)
def _unicode_to_byte() -> dict[str, int]:
    """Inverse of GPT-2's byte-to-printable-character table, which byte-level BPE token strings use."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}
