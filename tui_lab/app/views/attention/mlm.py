"""BERT in the Attention view: a typed [MASK], what it attends to, and the model's top guesses for it.

A masked-LM model (`head = "mlm"`) reads the whole sentence at once; the interesting query is the mask.
`mlm_ids` turns typed text into ids with the mask id where [MASK] was typed, `predictions` (torch, worker
thread) runs the model and keeps the top guesses at every mask, and `describe` writes them as one line.
"""

from __future__ import annotations

from typing import Any

from tui_lab.data.masking import TYPED_MASK, mask_id, mask_text_ids

# A line of the built-in corpus with one character masked (the toy is character-level): 'k' fits.
MLM_TEXT = f"Rosa showed him a boo{TYPED_MASK}, and they both laughed."
TOP = 5


def is_mlm(config) -> bool:
    return getattr(config, "head", "lm") == "mlm"


def mlm_ids(text: str, tokenizer: Any) -> tuple[list[int], list[str]] | None:
    """(ids, labels) with the mask id for each typed [MASK]; None when the tokenizer has no mask token."""
    if tokenizer is None or mask_id(tokenizer) is None:
        return None
    return mask_text_ids(text, tokenizer)


def predictions(model: Any, ids: list[int], tokenizer: Any, k: int = TOP) -> list[tuple[int, list[tuple[str, float]]]]:
    """[(position, [(token, probability)] best first)] for each mask position (worker thread)."""
    import torch

    mask = mask_id(tokenizer)
    positions = [i for i, token in enumerate(ids) if token == mask]
    if not positions:
        return []
    device = next(model.parameters()).device
    with torch.no_grad():
        probs = model(torch.tensor([ids], device=device))[0].float().softmax(-1)  # (L, V)
    out = []
    for pos in positions:
        top = probs[pos].topk(min(k, probs.shape[-1]))
        labels = tokenizer.token_strings(top.indices.tolist())
        out.append((pos, list(zip(labels, top.values.tolist(), strict=True))))
    return out


def describe(found: list[tuple[int, list[tuple[str, float]]]]) -> str:
    """One line: each mask's position and its top guesses with probabilities."""
    if not found:
        return f"type {TYPED_MASK} in the text to see the model's guesses for it"
    parts = []
    for pos, top in found:
        guesses = "  ".join(f"{label!r} {p:.2f}" for label, p in top)
        parts.append(f"{TYPED_MASK}@{pos}: {guesses}")
    return " · ".join(parts)
