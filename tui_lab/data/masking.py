"""The mask token of masked language modelling (BERT), torch-free so the app can spell it on its UI thread.

The token is one special token, `<mask>`, added at the end of a run's tokenizer; people type it as
`[MASK]` (BERT's spelling) in the app, and `mask_text_ids` puts the id where they did.
"""

from __future__ import annotations

from typing import Any

from tokenizers import Tokenizer as HFTokenizer

MASK = "<mask>"
TYPED_MASK = "[MASK]"


def with_mask_token(tokenizer):
    """The tokenizer with `<mask>` as its last id (a copy; the given one is left as it was)."""
    from tui_lab.data.tokenizers import Tokenizer

    if mask_id(tokenizer) is not None:
        return tokenizer
    hf = HFTokenizer.from_str(tokenizer.hf.to_str())
    hf.add_special_tokens([MASK])
    return Tokenizer(hf, tokenizer.kind, tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id, tokenizer.unk_id)


def mask_id(tokenizer: Any) -> int | None:
    """Ours is `<mask>`; a BERT checkpoint's WordPiece vocabulary has `[MASK]`."""
    hf = getattr(tokenizer, "hf", None)
    if hf is None:
        return None
    found = hf.token_to_id(MASK)
    return found if found is not None else hf.token_to_id(TYPED_MASK)


def mask_text_ids(text: str, tokenizer: Any) -> tuple[list[int], list[str]]:
    """(ids, labels) of `text` with each typed [MASK] as the mask id (labelled [MASK])."""
    ids: list[int] = []
    mask = mask_id(tokenizer)
    for i, piece in enumerate(text.split(TYPED_MASK)):
        if i and mask is not None:
            ids.append(mask)
        ids += tokenizer.encode(piece)
    labels = [TYPED_MASK if i == mask else label for i, label in zip(ids, tokenizer.token_strings(ids), strict=True)]
    return ids, labels
