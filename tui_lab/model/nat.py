"""Non-autoregressive decoding (NAT; seed 002 section 3.2, Gu et al. 2018): the whole target in one pass.

"Feed a row of BEGINs, read the output in one pass." The decoder has no causal mask: every position
sees every other one and the encoder output, and all positions are predicted at once. How many BEGINs?

- `nat-length-classifier`: a classifier reads the encoder output (mean of the real source positions ->
  Linear to `max_len` classes, class k = a target of k tokens) and says how many; the output is exactly
  that many tokens, never END.
- `nat-max-length`: `max_len` BEGINs, always (training feeds the same row, so the decoder never sees
  a row it was not trained on); the output is cut at the first END.

The decoder's input is the row of BEGIN tokens (the BEGIN embedding plus each position's encoding), not
Gu et al.'s uniform copy of the source embeddings. Measured (`tui-lab experiment run nat-vs-at`, numbers-de, the task's
default 400 steps, seed 0): BEGINs reach held-out exact match 0.94 (length classifier) and 0.99 (max
length), against AT's 0.99, so the simpler input already translates. Copies were not measured: they need
the length before the decoder runs, so nat-max-length could not use them at all, and on numbers-de a
position's source word is often not its target's (German puts units before tens: "twenty one" ->
"ein und zwanzig"); one input for both modes keeps the two comparable. The cost shows on `copy`: the
BEGIN row with the classifier scored 0.00 there in the default 300 steps (AT 1.00), since each position
must find its source word by position alone; copies of the source would hand it over, and are the next
thing to measure.

Dimension legend: N batch, S source length, T decoded positions, E d_model, V vocab, C max_len classes.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from tui_lab.config import ModelConfig

LENGTH_CLASSIFIER = "nat-length-classifier"
MAX_LENGTH = "nat-max-length"


class LengthClassifier(nn.Module):
    """Mean-pooled encoder output -> logits over target lengths 0..max_len-1 (C = max_len classes)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.proj = nn.Linear(config.d_model, config.max_len, bias=config.bias)

    def forward(self, memory: Tensor, src_mask: Tensor | None = None) -> Tensor:  # (N, S, E) -> (N, C)
        if src_mask is None:
            pooled = memory.mean(dim=1)
        else:
            keep = src_mask[..., None].to(memory.dtype)  # (N, S, 1): padding does not vote
            pooled = (memory * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return self.proj(pooled)


def begin_row(bos_id: int | Tensor, lengths: Tensor, width: int) -> tuple[Tensor, Tensor]:
    """(N,) lengths -> BEGIN ids (N, width) and the mask of real positions (N, width), True on the first
    `length` of each row (the decoder's keys beyond a row's length are padding)."""
    real = torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]  # (N, T)
    return torch.full(real.shape, int(bos_id), dtype=torch.long, device=lengths.device), real


def predict_lengths(model: nn.Module, memory: Tensor, src_mask: Tensor | None) -> Tensor:
    """(N,) the classifier's most likely target length for each source."""
    return model.length_classifier(memory, src_mask).argmax(dim=-1)


def one_pass(model: nn.Module, memory: Tensor, src_mask: Tensor | None, bos_id: int, lengths: Tensor | None,
             need_weights: bool = False):
    """The one decoder pass: logits (N, T, V) for `lengths` BEGINs per row (None: max_len BEGINs, unmasked),
    plus the real-position mask (N, T) or None, plus the attention captures when `need_weights`."""
    n = memory.shape[0]
    if lengths is None:
        ids = torch.full((n, model.config.max_len), bos_id, dtype=torch.long, device=memory.device)
        real = None
    else:
        ids, real = begin_row(bos_id, lengths, max(1, int(lengths.max())))
    out = model.decode(ids, memory, src_mask, tgt_mask=real, need_weights=need_weights)
    logits, captures = out if need_weights else (out, [])
    return logits, real, captures
