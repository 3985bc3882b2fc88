"""Which (query, key) pairs an attention pattern lets through, counted without building a mask.

The arithmetic twin of `tui_lab.model.masks.local_mask` (tests check the counts against the torch masks):
full attention, a sliding window of `window` keys (0 = full), and Longformer's `global_tokens`. Positions are
0..length-1. Causal: query i sees keys i-window+1..i. Non-causal: the band |i - k| <= (window-1)//2.
Global tokens (the first G positions) see every key and are seen by every query (causal: earlier ones only).
"""

from __future__ import annotations


def allowed(i: int, k: int, causal: bool, window: int = 0, global_tokens: int = 0) -> bool:
    """May query i attend to key k? (`local_mask`'s rule for one pair.)"""
    if causal and k > i:
        return False
    if window == 0 or i < global_tokens or k < global_tokens:
        return True
    return i - k < window if causal else abs(i - k) <= (window - 1) // 2


def pattern_name(causal: bool, window: int = 0, global_tokens: int = 0) -> str:
    """'causal, window 4 + 2 global' and the like: what a mask view's title says."""
    kind = "causal" if causal else "bidirectional"
    if window == 0:
        return f"{kind}, full"
    return f"{kind}, window {window}" + (f" + {global_tokens} global" if global_tokens else "")


def query_keys(i: int, length: int, causal: bool, window: int = 0, global_tokens: int = 0) -> int:
    """How many of `length` keys query i attends to."""
    seen = i + 1 if causal else length  # full attention
    if window == 0 or i < global_tokens:
        return seen
    if causal:
        low, high = max(0, i - window + 1), i
    else:
        radius = (window - 1) // 2
        low, high = max(0, i - radius), min(length - 1, i + radius)
    # global keys below the band (a query past the globals has none of them above it)
    return high - low + 1 + min(global_tokens, low)


def attended_pairs(length: int, causal: bool, window: int = 0, global_tokens: int = 0) -> int:
    """Allowed (query, key) pairs of a length x length attention."""
    if window == 0:
        return length * (length + 1) // 2 if causal else length * length
    return sum(query_keys(i, length, causal, window, global_tokens) for i in range(length))


def mean_keys(length: int, causal: bool, window: int = 0, global_tokens: int = 0) -> float:
    return attended_pairs(length, causal, window, global_tokens) / length if length else 0.0
