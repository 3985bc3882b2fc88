"""How a prompt's text becomes ids: the one rule the CLI and the app share (no torch)."""

from __future__ import annotations

from typing import Any


def prompt_ids(codec: Any, prompt: str, family: str, field: str = "prompt") -> list[int]:
    """Encode the prompt, saying clearly what the tokenizer cannot represent.

    Text the tokenizer lacks is refused unless it has an <unk> token; an empty prompt starts a
    decoder-only model from bos. `field` names the input in messages ("--prompt" for the CLI).
    """
    unknown = codec.unknown(prompt)
    if unknown and codec.unk_id is None:
        raise ValueError(f"{field} has text the tokenizer lacks: {' '.join(unknown)}")
    ids = codec.encode(prompt)
    if not ids and family == "decoder-only" and codec.bos_id is not None:
        ids = [codec.bos_id]  # an empty prompt starts from bos
    if not ids:
        raise ValueError(f"{field} must not be empty")
    return ids
