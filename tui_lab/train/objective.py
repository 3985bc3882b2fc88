"""What a training step minimises: the cross-entropy, with seed 002's seq2seq methods when asked for.

Scheduled sampling (tui_lab/train/scheduled_sampling.py) changes the decoder's inputs (the trainer calls it
first, outside the MoE routing record, since its extra pass is not trained); guided attention
(tui_lab/train/guided_attention.py) adds a penalty on the cross-attention, which needs the attention weights
and so the model's manual attention path. Both sums are over the batch's counted tokens; the trainer divides.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from tui_lab.train.guided_attention import guided_loss_sum
from tui_lab.train.sources import IGNORE_INDEX, token_loss_sum


def check_methods(c, is_seq2seq: bool, distributed: bool) -> None:
    """Refuse a method the run cannot apply, as one line naming the field."""
    from tui_lab.train.config import seq2seq_only

    for name, off in (("scheduled_sampling", "none"), ("guided_attention", 0.0)):
        if getattr(c, name) != off and not is_seq2seq:
            raise ValueError(seq2seq_only(name))
    if c.guided_attention and distributed:
        raise ValueError("guided_attention needs the cross-attention weights, which a DistributedDataParallel "
                         "forward does not return; train it in one process")


def loss_sums(model, batch, c) -> tuple[Tensor, Tensor | None]:
    """(cross-entropy sum, guided-attention sum or None) for one batch (its decoder inputs already mixed by
    scheduled sampling's `sampled_inputs` when the run asks for it)."""
    if not c.guided_attention or batch.tgt_in is None:
        return token_loss_sum(model, batch, c.label_smoothing), None
    out = model.run(batch.inputs, batch.tgt_in, src_mask=batch.src_mask, need_weights=True)
    ce = F.cross_entropy(out.logits.flatten(0, 1).float(), batch.targets.flatten(), ignore_index=IGNORE_INDEX,
                         label_smoothing=c.label_smoothing, reduction="sum")
    cross = [a.weights for a in out.attentions if a.kind == "cross"]
    return ce, guided_loss_sum(cross, batch.targets != IGNORE_INDEX, batch.src_mask, c.guided_attention_g)
