"""Small decoders the trainer needs for exact match and samples, with the model's KV cache.

Kept private to training so it does not wait on `tui_lab.generate`; same contract, greedy and plain
temperature sampling only. Dimension legend: N batch, S source length, T target length, V vocab.
"""

from __future__ import annotations

import torch
from torch import Tensor


@torch.no_grad()
def greedy_seq2seq(model, src: Tensor, src_mask: Tensor, bos_id: int, eos_id: int, max_new: int) -> Tensor:
    """(N, S) source -> (N, 1 + new) target starting with bos; rows that said eos keep emitting eos."""
    n = src.shape[0]
    memory = model.encode(src, src_mask)  # (N, S, E)
    cache = model.new_cache(n, max_new + 1)
    out = torch.full((n, 1), bos_id, dtype=torch.long, device=src.device)
    logits = model.decode(out, memory, src_mask, cache=cache)  # (N, 1, V)
    finished = torch.zeros(n, dtype=torch.bool, device=src.device)
    for _ in range(max_new):
        nxt = logits[:, -1].argmax(-1).masked_fill(finished, eos_id)  # (N,)
        out = torch.cat([out, nxt[:, None]], dim=1)
        finished |= nxt == eos_id
        if bool(finished.all()):
            break
        logits = model.decode(nxt[:, None], None, src_mask, cache=cache)
    return out


@torch.no_grad()
def sample_lm(model, prompt: Tensor, max_new: int, temperature: float, generator: torch.Generator) -> Tensor:
    """(1, L) prompt -> (1, L + new) by temperature sampling, kept within the model's max_len."""
    max_len = model.config.max_len
    prompt = prompt[:, -max(1, max_len - max_new):]
    max_new = min(max_new, max_len - prompt.shape[1])
    cache = model.new_cache(prompt.shape[0], prompt.shape[1] + max_new)
    logits = model.decode(prompt, cache=cache)  # (1, L, V)
    out = prompt
    for _ in range(max_new):
        probs = torch.softmax(logits[:, -1].float() / temperature, dim=-1)  # (1, V)
        nxt = torch.multinomial(probs.cpu(), 1, generator=generator).to(prompt.device)  # (1, 1)
        out = torch.cat([out, nxt], dim=1)
        logits = model.decode(nxt, cache=cache)
    return out
