"""The copy mechanism: a pointer-generator (See et al. 2017, section 2.2; seed 002, section 4, Tips 1).

At each target step a gate p_gen = sigmoid(w . [context; decoder state; decoder input] + b) mixes the
vocabulary distribution with the copy distribution, the cross-attention over the source positions:

    P(w) = p_gen * P_vocab(w) + (1 - p_gen) * sum of a_i over source positions i holding w

The attention a is the last decoder layer's cross-attention averaged over its heads, and the context is
a @ memory (See et al.'s h*). Words are ids of the example's extended vocabulary (`tui_lab.data.extended`):
a source word outside the vocabulary has a temporary id vocab + k, so copying it emits the word itself.
The model hands back log P over the extended vocabulary in place of logits: softmax(log P) = P, so the
sampler, beam search and cross-entropy all work on it unchanged.

Dimension legend: N batch, T target length, S source length, E d_model, V vocab, X extended vocab.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from tui_lab.model.attention import AttentionCapture

FLOOR = 1e-10  # log(0) would be -inf for the temporary ids a row does not have; the loss must stay finite


class CopyGate(nn.Module):
    """p_gen from [context; state; input]: one linear map of 3E inputs and a bias (3E + 1 parameters)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.gate = nn.Linear(3 * config.d_model, 1)

    def forward(self, logits: Tensor, state: Tensor, inputs: Tensor, cross: Tensor, memory: Tensor,
                src_ext: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """logits (N, T, V), state/inputs (N, T, E), cross (N, H, T, S), memory (N, S, E), src_ext (N, S)
        -> (log P (N, T, X), p_gen (N, T), copy distribution (N, T, S))."""
        attention = cross.float().mean(dim=1)  # (N, T, S): the heads' average
        context = attention.to(memory.dtype) @ memory  # (N, T, E)
        p_gen = torch.sigmoid(self.gate(torch.cat([context, state, inputs], dim=-1))).squeeze(-1).float()  # (N, T)
        vocab = torch.softmax(logits.float(), dim=-1) * p_gen[..., None]  # (N, T, V)
        size = max(logits.shape[-1], int(src_ext.max()) + 1) if src_ext.numel() else logits.shape[-1]
        mixed = nn.functional.pad(vocab, (0, size - logits.shape[-1]))  # (N, T, X)
        copy = attention * (1 - p_gen)[..., None]  # (N, T, S); padded source positions have a_i = 0
        index = src_ext[:, None, :].expand(-1, copy.shape[1], -1)  # (N, T, S)
        mixed = mixed.scatter_add(-1, index, copy)
        return mixed.clamp_min(FLOOR).log(), p_gen, copy


def copy_capture(layer: int, copy: Tensor) -> AttentionCapture:
    """The copy distribution as a target x source grid, kind "copy" (N, 1, T, S): rows sum to 1 - p_gen."""
    return AttentionCapture("decoder", layer, "copy", copy[:, None])


def p_gen_of(capture: AttentionCapture) -> Tensor:
    """(N, T) p_gen back from a copy capture: 1 minus the copy distribution's mass."""
    return 1 - capture.weights[:, 0].sum(dim=-1)


def feedable(ids: Tensor, vocab: int, unk_id: int | None) -> Tensor:
    """Ids the decoder can embed: a temporary (copied) id is fed back as <unk>, as See et al. do."""
    if unk_id is None or not bool((ids >= vocab).any()):
        return ids
    return ids.masked_fill(ids >= vocab, unk_id)
