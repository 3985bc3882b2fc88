"""What one training step measures around its backward pass: the tokens it processed, the statistics summed over
ranks in one all-reduce, and the gradient norms (per layer group and in all) before the total is clipped."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from tui_lab.train import distributed


def shared_stats(loss_sum: torch.Tensor, router: tuple[torch.Tensor, torch.Tensor] | None,
                 guide_sum: torch.Tensor | None, stopped: bool, device: str, dist) -> torch.Tensor:
    """One all-reduce over ranks: the loss sum, the stop flag, the guided-attention sum (0 when off) and,
    with MoE, the aux loss and expert load."""
    guide = guide_sum.detach().float().reshape(1) if guide_sum is not None else torch.zeros(1)
    parts = [loss_sum.detach().float().reshape(1), torch.tensor([float(stopped)]), guide]
    if router is not None:
        parts += [router[0].detach().float().reshape(1), router[1].flatten()]
    stats = torch.cat([p.cpu() for p in parts])
    return distributed.all_sum(stats.to(device), dist).cpu()


def clip_gradients(groups: dict[str, list[nn.Parameter]], model: nn.Module,
                   clip: float | None) -> tuple[float, dict[str, float]]:
    """Per-layer and total gradient norms (before clipping), then clip the total to `clip` (grad_clip)."""
    squares: dict[str, torch.Tensor] = {}
    for name, params in groups.items():
        grads = [p.grad.detach().float() for p in params if p.grad is not None]
        if grads:
            squares[name] = sum(g.pow(2).sum() for g in grads)
    norms = {name: math.sqrt(s.item()) for name, s in squares.items()}
    total = math.sqrt(sum(n * n for n in norms.values()))
    if clip and math.isfinite(total) and total > clip:
        scale = clip / (total + 1e-6)
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(scale)
    return total, norms


def moe_fields(values: torch.Tensor, world: int, experts: int) -> dict[str, Any]:
    """The step event's aux loss (the mean over ranks) and expert load (summed over ranks, layers x experts)."""
    load = values[1:].round().long().view(-1, experts)
    return {"aux_loss": values[0].item() / world, "expert_load": load.tolist()}


def counted_tokens(batch) -> int:
    """The tokens a step processes: LM N x L (every position is predicted); seq2seq the real source tokens
    plus the real target tokens (padding excluded on both sides)."""
    if batch.tgt_in is None and batch.src_mask is None:
        return batch.inputs.numel()  # LM: N x L, every position predicted; MLM: every position read
    source = int(batch.src_mask.sum()) if batch.src_mask is not None else 0
    return batch.count() + source
