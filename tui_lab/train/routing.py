"""The MoE router's two numbers for a training step: the load-balancing loss and the expert load.

Computed from the `Routing` records `model.moe.record_routing` kept during the step's forward pass; padding
(a seq2seq batch's) counts nowhere: the encoder's tokens are masked by `src_mask`, the decoder's by the
targets that count.
"""

from __future__ import annotations

from torch import Tensor

from tui_lab.config import ModelConfig
from tui_lab.model.moe import Routing, expert_load, load_balancing_loss
from tui_lab.train.sources import IGNORE_INDEX, Batch


def token_masks(batch: Batch) -> dict[str, Tensor] | None:
    """Stack -> (N, L) True on real tokens; None for a language model's windows (no padding)."""
    if batch.tgt_in is None:
        return None
    return {"encoder": batch.src_mask, "decoder": batch.targets != IGNORE_INDEX}


def router_stats(routing: list[Routing], config: ModelConfig, batch: Batch) -> tuple[Tensor, Tensor] | None:
    """(auxiliary loss (scalar, with grad), expert load (layers, X) token counts), or None without MoE."""
    if not routing:
        return None
    masks = token_masks(batch)
    k = config.experts_per_token
    return load_balancing_loss(routing, config.experts, k, masks), expert_load(routing, config.experts, k, masks)
