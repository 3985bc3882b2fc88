"""The attention mask rule, once: which query position may attend to which key position.

Written with operators that mean the same on plain ints and on broadcast tensors, so the model's masks
(`tui_lab.model.masks`, torch), the pair counts (`tui_lab.analysis.attention_pattern`) and the app's
torch-free grids all ask this one function. The convention is SDPA's: True = may attend.

Positions are absolute, so a KV cache's offset is in the positions themselves: with `past` tokens cached,
a new query at index i of the step sits at position `past + i` and sees keys 0..past+i.
"""

from __future__ import annotations

from typing import TypeVar

Pos = TypeVar("Pos")  # an int, or a tensor of positions that broadcasts against the other side


def may_attend(q: Pos, k: Pos, causal: bool, window: int = 0, global_tokens: int = 0) -> Pos:
    """True where query position `q` may attend key position `k`.

    Causal: keys at or before the query. A sliding `window` (0 = none): causally the query and the
    window-1 keys before it (Mistral); bidirectionally the band |q - k| <= (window-1)//2, at most `window`
    keys. Longformer's `global_tokens`, the first G positions, attend to every key and are attended by
    every query (causally: by later queries only).
    """
    distance = q - k
    if window == 0:
        return distance >= 0 if causal else abs(distance) >= 0  # the second is all True, in q's type
    if causal:
        near = (distance >= 0) & (distance < window)
    else:
        near = abs(distance) <= (window - 1) // 2
    if global_tokens:
        glob = (q < global_tokens) | (k < global_tokens)
        near = near | (glob & (distance >= 0) if causal else glob)
    return near
