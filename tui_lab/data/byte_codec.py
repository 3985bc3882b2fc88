"""The one fallback codec, for a model without a tokenizer (a preset's random weights)."""

from __future__ import annotations

_CONTROL_CHARS = {c: "\ufffd" for c in [*range(32), 127] if chr(c) not in "\n\t"}


class ByteCodec:
    """A stand-in tokenizer for a model without one: text <-> UTF-8 bytes, each byte id taken mod vocab.

    `decode` reads ids back as bytes (invalid UTF-8 and control characters become U+FFFD, so noise can
    never drive the terminal). Id 0 (the NUL byte, absent from typed text) serves as bos; there is no eos.
    """

    kind = "bytes"
    bos_id = 0
    eos_id = None
    unk_id = None

    def __init__(self, vocab: int) -> None:
        self.vocab = vocab

    def encode(self, text: str) -> list[int]:
        return [b % self.vocab for b in text.encode("utf-8")]

    def decode(self, ids: list[int]) -> str:
        return bytes(i % 256 for i in ids).decode("utf-8", errors="replace").translate(_CONTROL_CHARS)

    def unknown(self, text: str) -> list[str]:
        return []
