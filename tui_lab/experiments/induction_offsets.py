"""What the induction experiment's heads attend to when no induction head forms (issue 40 item 3, in part).

A run's repeated-block loss can fall without an induction head: one seed's two-layer model put 0.80-0.86 of its
layer-1 heads' attention on the earlier occurrence + 4 (not + 1, the induction offset) after layer-0 heads that
look 3-4 tokens back. So each run says whether an induction head formed (a head's induction score over
`SCORED`), and which offsets its heads use: from a token of the repeat, the mean attention on the key at the
earlier occurrence + d (d = 1: induction; d = 0: duplicate token), and from every token, on the key j back
(j = 1: previous token). Read from `attn.hook_pattern` on held-out sequences.
Dimension legend: N batch, H heads, L length.
"""

from __future__ import annotations

from typing import Any

SPAN = 8  # offsets looked at: the earlier occurrence -SPAN..+SPAN, and 1..SPAN tokens back


def occurrence_offsets(patterns, start, k, span: int = SPAN):
    """patterns (layers, N, H, L, L), each row's first block at `start` (N,) of length `k` (N,) -> (layers, H,
    2 span + 1): the mean attention from the repeat's tokens to the key at their earlier occurrence + d, d = -span
    .. span (a key past the query or before 0 counts as no attention)."""
    import torch

    layers, n, heads, length, _ = patterns.shape
    pos = torch.arange(length)[None]  # (1, L)
    repeat = (pos >= (start + k)[:, None]) & (pos < (start + 2 * k)[:, None])  # (N, L): queries
    columns = []
    for d in range(-span, span + 1):
        key = pos - k[:, None] + d  # (N, L)
        valid = (key >= 0) & (key <= pos)
        index = key.clamp(0, length - 1)[None, :, None, :, None].expand(layers, n, heads, length, 1)
        weight = patterns.gather(-1, index)[..., 0] * valid[None, :, None, :]  # (layers, N, H, L)
        mask = repeat[None, :, None, :].float()
        columns.append((weight * mask).sum(dim=(1, 3)) / mask.sum(dim=(1, 3)))
    return torch.stack(columns, dim=-1)


def look_back(patterns, span: int = SPAN):
    """patterns (layers, N, H, L, L) -> (layers, H, span): the mean attention from each query on the key j tokens
    back, j = 1..span (queries from position span on, so every j exists)."""
    import torch

    return torch.stack(
        [
            patterns[..., span:, :].diagonal(offset=span - j, dim1=-2, dim2=-1).mean(dim=(1, 3))
            for j in range(1, span + 1)
        ],
        dim=-1,
    )


def offsets_found(patterns, start, k, induction, scored: float, span: int = SPAN) -> dict[str, Any]:
    """Whether an induction head formed (a score in `induction` (layers, H) over `scored`), the head whose attention
    on one offset from the earlier occurrence is largest (in a layer past the first when there is one), and the
    head that looks back one fixed distance most."""
    occurrence, back = occurrence_offsets(patterns, start, k, span), look_back(patterns, span)
    first = 1 if occurrence.shape[0] > 1 else 0
    layer, head, d = _argmax3(occurrence[first:])
    layer += first
    b_layer, b_head, j = _argmax3(back)
    return {
        "induction_formed": bool(induction.max() > scored),
        "offset_head": f"L{layer}H{head}",
        "offset": d - span,
        "offset_share": round(float(occurrence[layer, head, d]), 4),
        "look_back_head": f"L{b_layer}H{b_head}",
        "look_back": j + 1,
        "look_back_share": round(float(back[b_layer, b_head, j]), 4),
    }


def _argmax3(t) -> tuple[int, int, int]:
    flat = int(t.flatten().argmax())
    a, rest = divmod(flat, t.shape[1] * t.shape[2])
    return a, *divmod(rest, t.shape[2])


def describe(found: dict[str, Any], label: str, loss_fell: bool) -> str:
    """One note: the induction head, or what the heads do instead when the loss fell without one."""
    offset = f"the earlier occurrence {found['offset']:+d}" if found["offset"] else "the earlier occurrence itself"
    heads = (
        f"{found['offset_head']} puts {found['offset_share']:.2f} of its attention on {offset}; "
        f"{found['look_back_head']} attends {found['look_back']} back ({found['look_back_share']:.2f})"
    )
    if found["induction_formed"]:
        return f"{label}: an induction head formed ({heads})"
    if loss_fell:
        return f"{label}: the repeated block's loss fell without an induction head: {heads}"
    return f"{label}: no induction head formed ({heads})"
