"""Marian's tokenizer (Helsinki-NLP opus-mt), read as transformers' MarianTokenizer reads it, with `sentencepiece`.

A Marian folder holds two sentencepiece models, `source.spm` (the source language) and `target.spm`, and one
`vocab.json` (piece -> id) that both sides share and the model's embedding rows follow; there is no
tokenizer.json. The ids are vocab.json's, never sentencepiece's own: a piece vocab.json lacks is <unk>.

It has the lab's tokenizer interface (`tui_lab.data.tokenizers.Tokenizer`'s methods and special ids), so
generation, the CLI and the Attention view use it unchanged. One difference, and it is Marian's:
`encode(text)` is the SOURCE as the model reads it, its pieces then </s> (MarianTokenizer's input_ids), and
`encode_target(text)` a typed target, read with target.spm (the Attention view's teacher forcing); the
decoder starts from decoder_start_token_id, our `bos_id`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_lab.errors import one_line

FILES = ("source.spm", "target.spm", "vocab.json")
UNK, EOS, PAD = "<unk>", "</s>", "<pad>"


class MarianTokenizer:
    """source.spm pieces -> vocab.json ids (+ </s>); ids -> pieces -> target.spm's detokenizer."""

    kind = "sentencepiece"

    def __init__(
        self, source: Any, target: Any, vocab: dict[str, int], pad_id: int, bos_id: int, eos_id: int, unk_id: int
    ) -> None:
        self.source, self.target, self.vocab = source, target, vocab  # two SentencePieceProcessors, piece -> id
        self.pieces_by_id = {i: piece for piece, i in vocab.items()}
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = pad_id, bos_id, eos_id, unk_id
        for name, value in self.special_ids_by_name().items():
            if not 0 <= value < self.vocab_size:
                raise ValueError(f"{name}: {value} is outside vocab.json (0..{self.vocab_size - 1})")

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def special_ids_by_name(self) -> dict[str, int]:
        return {"pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id, "unk_id": self.unk_id}

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(self.special_ids_by_name().values())

    def pieces(self, text: str) -> list[str]:
        """The source sentencepiece pieces of `text`; a leading language code (>>de<<) stays one piece,
        as MarianTokenizer keeps it for multilingual models."""
        code = []
        if text.startswith(">>") and (end := text.find("<<")) != -1:
            code, text = [text[: end + 2]], text[end + 2 :]
        return code + self.source.encode(text, out_type=str)

    def encode(self, text: str) -> list[int]:
        """The source as Marian reads it: vocab.json ids of the pieces, then </s> (MarianTokenizer's input_ids)."""
        return [self.vocab.get(piece, self.unk_id) for piece in self.pieces(text)] + [self.eos_id]

    def encode_target(self, text: str) -> list[int]:
        """A typed target as a decoder input's ids: target.spm's pieces, no </s> (what the last query predicts);
        MarianTokenizer's `text_target` labels without their final </s>."""
        return [self.vocab.get(piece, self.unk_id) for piece in self.target.encode(text, out_type=str)]

    def decode(self, ids: list[int]) -> str:
        """Target text: special ids dropped, the pieces joined by target.spm's detokenizer.

        Pieces target.spm does not know (a source-only piece) come back with their ▁ kept: MarianTokenizer
        turns what is left of ▁ into spaces and strips the ends, and so do we."""
        pieces = [self.pieces_by_id[i] for i in self._checked(ids) if i not in self.special_ids]
        return self.target.decode_pieces(pieces).replace("▁", " ").strip()

    def token_strings(self, ids: list[int]) -> list[str]:
        """One label per id: the piece as sentencepiece spells it ('▁seen': ▁ marks a word's start)."""
        return [self.pieces_by_id[i] for i in self._checked(ids)]

    def unknown(self, text: str) -> list[str]:
        """The pieces of `text` vocab.json lacks (each maps to <unk>), each once, in order, ▁ shown as a space."""
        missing = [piece.replace("▁", " ").strip() or piece for piece in self.pieces(text) if piece not in self.vocab]
        return list(dict.fromkeys(missing))

    def __repr__(self) -> str:
        return f"MarianTokenizer(kind='sentencepiece', vocab_size={self.vocab_size})"

    def _checked(self, ids: list[int]) -> list[int]:
        ids = [int(i) for i in ids]  # accepts tensors' elements and numpy ints
        for i in ids:
            if i not in self.pieces_by_id:
                raise ValueError(f"ids: {i} is outside vocab.json (0..{self.vocab_size - 1})")
        return ids


def missing_files(folder: Path) -> list[str]:
    return [name for name in FILES if not (folder / name).is_file()]


def marian_tokenizer(folder: Path, hf: dict[str, Any]) -> MarianTokenizer:
    """The tokenizer of a Marian folder with all of FILES. ImportError without the sentencepiece package;
    ValueError (one line naming the file) for a file that cannot be read."""
    import sentencepiece

    source, target = (_processor(sentencepiece, folder / name) for name in FILES[:2])
    vocab = _vocab(folder / "vocab.json")
    if UNK not in vocab:
        raise ValueError("vocab.json: has no <unk> piece, which Marian's tokenizer needs")
    eos = _config_id(hf, "eos_token_id", vocab.get(EOS))
    pad = _config_id(hf, "pad_token_id", vocab.get(PAD))
    if eos is None or pad is None:
        raise ValueError("vocab.json: names no </s> or <pad> and config.json gives no eos_token_id / pad_token_id")
    bos = _config_id(hf, "decoder_start_token_id", pad)  # Marian's decoder starts from its pad token
    return MarianTokenizer(source, target, vocab, pad_id=pad, bos_id=bos, eos_id=eos, unk_id=vocab[UNK])


def _processor(sentencepiece: Any, path: Path) -> Any:
    try:
        return sentencepiece.SentencePieceProcessor(model_file=str(path))
    except Exception as err:  # sentencepiece raises OSError or RuntimeError for a malformed model
        raise ValueError(f"{path.name}: cannot read the sentencepiece model ({one_line(err)})") from None


def _vocab(path: Path) -> dict[str, int]:
    try:
        vocab = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"vocab.json: cannot read it ({one_line(err)})") from None
    if not isinstance(vocab, dict) or not all(isinstance(i, int) and not isinstance(i, bool) for i in vocab.values()):
        raise ValueError("vocab.json: must be an object of piece -> integer id")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise ValueError(f"vocab.json: its ids must be 0..{len(vocab) - 1}, each once")
    return vocab


def _config_id(hf: dict[str, Any], key: str, fallback: int | None) -> int | None:
    value = hf.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback
