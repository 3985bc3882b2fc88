"""The training loss of a non-autoregressive decoder (tui_lab/model/nat.py), from the same batches as AT's.

The decoder reads a row of BEGINs (never the gold target: there is no teacher forcing to do) and all
positions are scored at once:
- `nat-length-classifier`: one BEGIN per target token, the row's other keys masked; the loss is the
  cross-entropy over the target tokens (no END: the classifier decides where the output stops) plus the
  classifier's cross-entropy on the gold length (on the detached encoder output), one term per sequence,
  summed like the tokens.
- `nat-max-length`: `max_len` BEGINs for every row (the same row decoding will feed); the loss covers the
  target tokens and the END after them; positions past END are not scored (decoding cuts there).
Both are sums, like `sources.token_loss_sum`, so the trainer's division by the batch's target count holds.
Dimension legend: N batch, S source, T decoded positions, V vocab.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from tui_lab.model.nat import LENGTH_CLASSIFIER, one_pass

IGNORE_INDEX = -100


def nat_loss_sum(model, batch, label_smoothing: float) -> Tensor:
    """Summed NAT loss of a seq2seq `Batch` (targets end with END, IGNORE_INDEX on padding)."""
    if hasattr(model, "module"):
        # DDP reduces gradients through its wrapped forward; the NAT pass (encoder, classifier, one decoder
        # pass) is not that forward, so it would silently skip the reduction.
        raise ValueError("decoder_mode: NAT models train in one process; run without torchrun")
    config, core = model.config, model
    lengths = (batch.targets != IGNORE_INDEX).sum(dim=1) - 1  # (N,) target tokens, END not included
    bos_id = int(batch.tgt_in[0, 0])
    memory = model.encode(batch.inputs, batch.src_mask)
    if config.decoder_mode == LENGTH_CLASSIFIER:
        logits, real, _ = one_pass(core, memory, batch.src_mask, bos_id, lengths)  # (N, T, V)
        width = logits.shape[1]
        targets = batch.targets[:, :width].masked_fill(~real, IGNORE_INDEX)  # END and padding not scored
        # The classifier reads the encoder output without shaping it: with its gradient flowing into the
        # encoder, copy and reverse never learned (val loss 2.6 after 300-400 steps, exact match 0, while
        # nat-max-length reached 0.06 and 1.0); detached, copy's loss fell like max length's (0.86 vs 0.74
        # at step 150).
        length_logits = core.length_classifier(memory.detach(), batch.src_mask)  # (N, max_len)
        length_loss = F.cross_entropy(length_logits.float(), lengths.clamp(max=config.max_len - 1), reduction="sum")
    else:
        logits, _, _ = one_pass(core, memory, batch.src_mask, bos_id, None)  # (N, max_len, V)
        targets = _pad_to(batch.targets, logits.shape[1], config.max_len)
        length_loss = logits.new_zeros(())
    tokens = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), ignore_index=IGNORE_INDEX,
                             label_smoothing=label_smoothing, reduction="sum")
    return tokens + length_loss


def _pad_to(targets: Tensor, width: int, max_len: int) -> Tensor:
    """(N, T') targets -> (N, width), IGNORE_INDEX beyond T'; a target longer than the row is refused."""
    if targets.shape[1] > width:
        raise ValueError(f"max_len ({max_len}) must hold the longest target and its END ({targets.shape[1]} "
                         "tokens) for decoder_mode 'nat-max-length'; raise max_len")
    out = torch.full((targets.shape[0], width), IGNORE_INDEX, dtype=targets.dtype, device=targets.device)
    out[:, : targets.shape[1]] = targets
    return out

