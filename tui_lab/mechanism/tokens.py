"""Token ids as people read them, and the prompts the mechanism tools take (torch-free)."""

from __future__ import annotations

from typing import Any


def token_text(codec: Any, token: int) -> str:
    """One token's display string: the codec's own `token_strings` when it has them, else its decode."""
    if hasattr(codec, "token_strings"):
        return codec.token_strings([token])[0]
    return codec.decode([token])


def single_token(codec: Any, text: str, field: str) -> int:
    """The one id `text` encodes to (an answer token); refused in one line when it is none or several."""
    ids = codec.encode(text)
    if len(ids) != 1:
        shown = " ".join(token_text(codec, i) for i in ids) or "nothing"
        raise ValueError(f"{field} must be one token; {text!r} is {len(ids)} ({shown})")
    return ids[0]
