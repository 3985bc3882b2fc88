"""Which (query, key) pairs an attention pattern lets through, counted without building a mask.

Closed forms of the pairs that `tui_lab.mask_rule.may_attend` lets through (tests count the rule pair by
pair against them): full attention, a sliding window of `window` keys (0 = full), and Longformer's
`global_tokens`. Positions are 0..length-1.
"""

from __future__ import annotations


def pattern_name(window: int = 0, global_tokens: int = 0) -> str:
    """'window 4 + 2 global', or 'full': what a mask view's title says."""
    if window == 0:
        return "full"
    return f"window {window}" + (f" + {global_tokens} global" if global_tokens else "")


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
