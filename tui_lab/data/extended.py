"""A per-example extended vocabulary for the copy mechanism (See et al. 2017, section 2.2).

The source's out-of-vocabulary pieces (the text the tokenizer would map to <unk>) get temporary ids
vocab_size + k, k = 0, 1, ... in order of first appearance, so a copied token IS the source's word and not
<unk>. A target word that is one of those pieces takes the same id; any other unknown target word stays
<unk>. The temporary ids exist only for that one example: nothing enters the tokenizer. No torch here.
"""

from __future__ import annotations

from typing import Any


def source_ids(tokenizer: Any, text: str) -> tuple[list[int], list[str]]:
    """(extended ids of the source, its out-of-vocabulary pieces in order: id vocab_size + k is oov[k])."""
    if not hasattr(tokenizer, "hf"):  # a codec without a vocabulary of words (random weights' bytes)
        return tokenizer.encode(text), []
    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    ids, oov = [], []
    for token, (start, end) in zip(enc.ids, enc.offsets, strict=True):
        if tokenizer.unk_id is not None and token == tokenizer.unk_id:
            piece = text[start:end]
            if piece not in oov:
                oov.append(piece)
            token = tokenizer.vocab_size + oov.index(piece)
        ids.append(token)
    return ids, oov


def target_ids(tokenizer: Any, text: str, oov: list[str]) -> list[int]:
    """Extended ids of a target: an unknown piece the source has gets its temporary id, others <unk>."""
    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    out = []
    for token, (start, end) in zip(enc.ids, enc.offsets, strict=True):
        piece = text[start:end]
        if tokenizer.unk_id is not None and token == tokenizer.unk_id and piece in oov:
            token = tokenizer.vocab_size + oov.index(piece)
        out.append(token)
    return out


def base_ids(tokenizer: Any, ids: list[int]) -> list[int]:
    """The same ids with every temporary id turned back into <unk> (what the encoder and decoder embed)."""
    return [tokenizer.unk_id if i >= tokenizer.vocab_size else i for i in ids]


def token_strings(tokenizer: Any, ids: list[int], oov: list[str]) -> list[str]:
    """One display string per id, a temporary id showing its source word."""
    return [_word(i, tokenizer, oov) if i >= tokenizer.vocab_size else tokenizer.token_strings([i])[0] for i in ids]


def decode(tokenizer: Any, ids: list[int], oov: list[str]) -> str:
    """Text of extended ids: specials dropped, temporary ids as their source words."""
    ids = [int(i) for i in ids]
    if all(i < tokenizer.vocab_size for i in ids):
        return tokenizer.decode(ids)
    parts, run = [], []
    for i in ids:
        if i < tokenizer.vocab_size:
            run.append(i)
            continue
        parts.append(tokenizer.decode(run))
        parts.append(_word(i, tokenizer, oov))
        run = []
    parts.append(tokenizer.decode(run))
    # Word tokenizers join with spaces; character ones concatenate (their decode adds no separator).
    glue = " " if tokenizer.kind == "word" else ""
    return glue.join(p for p in parts if p)


def _word(token: int, tokenizer: Any, oov: list[str]) -> str:
    k = token - tokenizer.vocab_size
    if not 0 <= k < len(oov):
        raise ValueError(f"ids: {token} is outside this example's extended vocabulary "
                         f"(0..{tokenizer.vocab_size + len(oov) - 1})")
    return oov[k]
