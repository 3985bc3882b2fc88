"""Choosing the next token from logits: greedy, temperature, top-k and top-p (nucleus) sampling.

Dimension legend: N batch (rows), V vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor


def next_tokens(logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                generator: torch.Generator | None = None) -> Tensor:
    """(N, V) logits -> (N,) token ids. Temperature 0 is greedy (argmax); otherwise sample."""
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(filter_logits(logits.float() / temperature, top_k, top_p), dim=-1)
    return multinomial(probs, generator)


def filter_logits(logits: Tensor, top_k: int | None, top_p: float | None) -> Tensor:
    """Set to -inf every logit outside the top k and outside the smallest set holding top_p of the mass."""
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]  # (N, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1:
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        # Drop a token when the tokens ranked above it already hold top_p of the mass; the first stays.
        drop_sorted = (probs.cumsum(dim=-1) - probs) >= top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def chosen_probs(logits: Tensor, tokens: Tensor, temperature: float) -> Tensor:
    """(N,) probability of each chosen token under softmax(logits / T) (T = 1 for greedy), before truncation."""
    scaled = logits.float() / (temperature if temperature > 0 else 1.0)
    return torch.softmax(scaled, dim=-1).gather(-1, tokens[:, None]).squeeze(-1)


def multinomial(probs: Tensor, generator: torch.Generator | None, samples: int | None = None) -> Tensor:
    """Sample one id per row, (N,); or `samples` ids per row without replacement, (N, samples). A generator on
    another device (a CPU seed for a CUDA model) samples there."""
    count = 1 if samples is None else samples
    if generator is not None and generator.device != probs.device:
        ids = torch.multinomial(probs.to(generator.device), count, generator=generator).to(probs.device)
    else:
        ids = torch.multinomial(probs, count, generator=generator)
    return ids.squeeze(-1) if samples is None else ids
