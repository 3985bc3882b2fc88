"""The NAT path of the decoding loop (`loop.generate` / `loop.stream` take it for a NAT model).

One decoder pass over a row of BEGINs (tui_lab/model/nat.py) gives every position's logits at once; the
loop then hands them out as one `GenerationStep` per position, like AT's, each saying the completion took
one pass. How many positions:
- `nat_length` given (a person's override): exactly that many tokens, END masked out. The length classifier
  model reads that many BEGINs (as it trained); the max-length model reads its usual max_len row and the
  first `nat_length` positions are kept.
- else `nat-length-classifier`: the classifier's length (at least 1), END masked out;
  `nat-max-length`: max_len BEGINs, cut at the first END.
`max_new_tokens` caps the output as it does AT's. Rows that are done are padded with END.
Dimension legend: N rows, T decoded positions, V vocab, H heads, S source.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor

from tui_lab.config import ModelConfig, is_nat
from tui_lab.generation.sampling import chosen_probs
from tui_lab.model import AttentionCapture
from tui_lab.model.nat import LENGTH_CLASSIFIER, one_pass, predict_lengths


def check_nat(config: ModelConfig, nat_length: int | None, beam_size: int = 1) -> None:
    """One-line ValueErrors for NAT settings this model cannot honour."""
    if nat_length is not None and not is_nat(config):
        raise ValueError(f"nat_length applies to NAT models only (decoder_mode nat-length-classifier or "
                         f"nat-max-length); this one is {config.decoder_mode}")
    if nat_length is not None and not (isinstance(nat_length, int) and 1 <= nat_length <= config.max_len):
        raise ValueError(f"nat_length ({nat_length}) must be an integer in 1..{config.max_len} (the model's max_len)")
    if is_nat(config) and beam_size > 1:
        raise ValueError(f"beam_size ({beam_size}) must be 1 for a NAT model: it decodes in one pass, "
                         "there is nothing to search")


def nat_steps(model: Any, input_ids: Tensor, max_new_tokens: int, sampler: Any, eos_id: int | None, bos_id: int,
              src_mask: Tensor | None, nat_length: int | None, need_attention: bool = False,
              need_candidates: int | None = None, step_type: Any = None) -> Iterator[Any]:
    """Yield one `step_type` (loop.GenerationStep) per position of the one decoder pass."""
    config, rows = model.config, input_ids.shape[0]
    memory = model.encode(input_ids, src_mask)  # (N, S, E)
    predicted = predict_lengths(model, memory, src_mask) if config.decoder_mode == LENGTH_CLASSIFIER else None
    begins = _begins(config, rows, predicted, nat_length, max_new_tokens, input_ids.device)
    feed = begins if config.decoder_mode == LENGTH_CLASSIFIER else None  # max-length: always its trained row
    logits, _, captures = one_pass(model, memory, src_mask, bos_id, feed, need_attention)  # (N, T, V)
    known = begins is not None  # the length is decided, so END is never chosen
    if known and eos_id is not None:
        logits[..., eos_id] = float("-inf")
    width = logits.shape[1] if not known else int(begins.max())
    tokens = sampler.choose(logits[:, :width].flatten(0, 1)).view(rows, width)  # (N, T)
    steps = min(max_new_tokens, width + (1 if known and eos_id is not None else 0))
    finished = torch.zeros(rows, dtype=torch.bool, device=input_ids.device)
    for i in range(steps):
        ids = tokens[:, i] if i < width else torch.full_like(tokens[:, 0], eos_id)
        if known and eos_id is not None:
            ids = ids.masked_fill(i >= begins, eos_id)  # a row past its length ends
        if eos_id is not None:
            ids = ids.masked_fill(finished, eos_id)
            finished = finished | (ids == eos_id)
        step_logits = logits[:, min(i, logits.shape[1] - 1)]  # (N, V)
        probs = chosen_probs(step_logits, ids, sampler.temperature)
        top = sampler.top(step_logits, need_candidates) if need_candidates else None
        rows_seen = [AttentionCapture(c.stack, c.layer, c.kind, c.weights[:, :, i:i + 1]) for c in captures
                     if i < c.weights.shape[2]] if need_attention else None
        yield step_type(i, ids, probs, finished, False, False, rows_seen, top, passes=1,
                        begins=begins if begins is not None else torch.full_like(ids, config.max_len),
                        predicted_length=predicted)
        if eos_id is not None and bool(finished.all()):
            return


def _begins(config: ModelConfig, rows: int, predicted: Tensor | None, nat_length: int | None, cap: int,
            device: torch.device) -> Tensor | None:
    """(N,) positions each row decodes, or None for max-length decoding cut at the first END."""
    if nat_length is not None:
        return torch.full((rows,), min(nat_length, cap), dtype=torch.long, device=device)
    if predicted is not None:
        return predicted.clamp(min=1, max=cap)
    return None
