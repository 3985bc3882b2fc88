"""Learned patterns a tour can point at in a trained decoder, measured rather than asserted.

A previous-token head (Olsson et al. 2022, "In-context learning and induction heads") puts most of its
weight on position i-1 for every query i. Its score is the mean of that weight over the queries of some
text; a head that ignores position would score the mean of 1/(i+1) under a causal mask (chance).
Dimension legend: N batch, H heads, L length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class HeadScore:
    layer: int
    head: int
    score: float  # mean attention weight on the previous position
    chance: float  # the same mean for a head that spreads its weight evenly over the visible keys

    def to_dict(self) -> dict[str, float | int]:
        return {"layer": self.layer, "head": self.head, "score": self.score, "chance": self.chance}


def previous_token_scores(model, ids: Tensor) -> Tensor:
    """(layers, H): each decoder self-attention head's mean weight on position i-1, over queries i >= 1.

    `ids` is (N, L) text the model reads; the first query has no previous token and is left out.
    """
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            captures = model.run(ids, need_weights=True).attentions
    finally:
        model.train(was_training)
    rows = []
    for capture in captures:
        if capture.kind != "decoder-self":
            continue
        w = capture.weights  # (N, H, L, L)
        prev = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1)  # (N, H, L - 1): weight of query i on key i-1
        rows.append(prev.float().mean(dim=(0, 2)))  # (H,)
    return torch.stack(rows)  # (layers, H)


def chance_previous_weight(length: int) -> float:
    """Mean over queries i = 1..L-1 of 1/(i+1): the previous-token weight of a uniform causal head."""
    return sum(1.0 / (i + 1) for i in range(1, length)) / max(1, length - 1)


def previous_token_head(model, ids: Tensor) -> HeadScore:
    """The decoder self-attention head with the highest previous-token score on `ids` (N, L)."""
    scores = previous_token_scores(model, ids)  # (layers, H)
    flat = int(torch.argmax(scores))
    layer, head = divmod(flat, scores.shape[1])
    return HeadScore(layer, head, float(scores[layer, head]), chance_previous_weight(ids.shape[1]))


def reading_windows(tokenizer, count: int = 8, length: int = 128) -> Tensor:
    """(count, length) token windows from the built-in corpus's validation split (text it never trained on)."""
    from tui_lab.data.corpus import builtin_corpus
    from tui_lab.data.lm import lm_data

    val = lm_data(builtin_corpus(), tokenizer).val  # the same split `tui-lab train` holds out
    if len(val) < count * length:
        raise ValueError(f"windows: {count} x {length} tokens need more than the {len(val)} held out")
    return val[: count * length].view(count, length)
