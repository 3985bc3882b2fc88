"""induction-heads' data and measures: sequences with a repeated random block, the two blocks' losses, and
each head's induction and previous-token scores (TransformerLens' definitions). Dimension legend: N batch,
L window, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Batch:
    ids: Any  # (N, L) tokens
    start: Any  # (N,) first block's start
    k: Any  # (N,) block length

    def masks(self):
        """(first, repeat) boolean masks (N, L-1) over the next-token predictions: position t predicts t+1;
        each block's k - 1 predictable tokens (its first token follows nothing in particular)."""
        import torch

        t = torch.arange(self.ids.shape[1] - 1)[None]  # (1, L-1)
        s, k = self.start[:, None], self.k[:, None]
        first = (t >= s) & (t < s + k - 1)
        repeat = (t >= s + k) & (t < s + 2 * k - 1)
        return first, repeat


def batch(n: int, options: dict[str, Any], generator) -> Batch:
    """n sequences of `window` random tokens, each with a random block of k tokens repeated once."""
    import torch

    window, lo, hi = options["window"], options["k_min"], options["k_max"]
    ids = torch.randint(1, options["vocab"], (n, window), generator=generator)  # token 0: the filler
    k = torch.randint(lo, hi + 1, (n,), generator=generator)
    start = (torch.rand(n, generator=generator) * (window - 2 * k + 1)).long()  # s + 2k <= window
    pos = torch.arange(window)[None]
    second = (pos >= start[:, None] + k[:, None]) & (pos < start[:, None] + 2 * k[:, None])
    src = (pos - k[:, None]).clamp(min=0)  # the earlier copy's position
    ids = torch.where(second, ids.gather(1, src), ids)
    if options["filler"] == "constant":  # outside the two copies every token is 0
        first = (pos >= start[:, None]) & (pos < start[:, None] + k[:, None])
        ids = torch.where(first | second, ids, torch.zeros_like(ids))
    return Batch(ids, start, k)


def block_losses(logits, b: Batch) -> tuple[float, float]:
    """Mean next-token loss on the first block and on the repeated block."""
    import torch.nn.functional as F

    loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), b.ids[:, 1:], reduction="none")  # (N, L-1)
    first, repeat = b.masks()
    return float(loss[first].mean()), float(loss[repeat].mean())


def head_scores(patterns, b: Batch):
    """patterns (layers, N, H, L, L) -> (induction, previous_token), each (layers, H), TransformerLens' way."""
    import torch

    layers, n, heads, length, _ = patterns.shape
    pos = torch.arange(length)[None]
    s, k = b.start[:, None], b.k[:, None]
    repeat = (pos >= s + k) & (pos < s + 2 * k)  # (N, L): every token of the second copy
    source = (pos - k + 1).clamp(min=0)  # the token after the earlier occurrence
    index = source[None, :, None, :, None].expand(layers, n, heads, length, 1)
    to_source = patterns.gather(-1, index)[..., 0]  # (layers, N, H, L)
    mask = repeat[None, :, None, :].float()
    induction = (to_source * mask).sum(dim=(1, 3)) / mask.sum(dim=(1, 3))
    previous = patterns.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(1, 3))  # (layers, H)
    return induction, previous
