"""Path patching (Wang et al. 2022, "Interpretability in the Wild", section 3.1): how much of the answer a sender
head passes to one receiver head through the receiver's query, key or value input alone.

Restoring a head's clean output in the corrupted run (activation patching of `hook_z`) moves every path out of
it; path patching keeps one. Two passes on the corrupted prompt per sender:
1. the sender's `hook_z` set to its clean value, every other head from the sender's layer up to the receiver's
   frozen at its corrupted value (so the change reaches the receiver by the direct path and through MLPs, as in
   the paper), and the receiver layer's `hook_q` / `hook_k` / `hook_v` read;
2. the plain corrupted run with only the receiver's chosen input(s) replaced by what pass 1 read;
then the metric's recovery, (m_patched - m_corrupt) / (m_clean - m_corrupt), as in `patching`.
A grouped-query receiver's key and value belong to its kv head, shared by the query heads of its group: patching
them reaches each of those heads.
Dimension legend: N batch, L length, H heads, K kv heads, D d_head.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from tui_lab.mechanism.cache import layer_points, require_causal, run_with_cache, run_with_hooks
from tui_lab.mechanism.patching import PatchMetric, PatchTable, gap_warning, measured
from tui_lab.model.hooks import attached

INPUTS = ("q", "k", "v")


def _sender_hook(clean: Tensor, frozen: Tensor, sender_layer: bool):
    """hook_z of a layer between sender and receiver, on a batch of H rows (row h: sender head h): every head its
    corrupted value `frozen` (L, H, D), and in the sender's own layer row h's head h its clean value."""

    def hook(z: Tensor, _: str) -> Tensor:  # (H, L, H, D)
        z = frozen.expand_as(z).clone()
        if sender_layer:
            rows = torch.arange(z.shape[0], device=z.device)
            z[rows, :, rows] = clean[:, rows].transpose(0, 1)
        return z

    return hook


def _put(values: Tensor, head: int):
    """A hook that puts head `head` of `values` (N, L, H or K, D) in place, row by row."""

    def hook(x: Tensor, _: str) -> Tensor:
        x = x.clone()
        x[:, :, head] = values[:, :, head]
        return x

    return hook


def _check(model, receiver: tuple[int, int], inputs: tuple[str, ...]) -> None:
    layers, heads = model.config.decoder_layers, model.config.heads
    if not 0 < receiver[0] < layers or not 0 <= receiver[1] < heads:
        raise ValueError(
            f"receiver: L{receiver[0]}H{receiver[1]} must be a head in layers 1..{layers - 1} (a sender "
            f"sits in an earlier layer), heads 0..{heads - 1}"
        )
    bad = [name for name in inputs if name not in INPUTS]
    if bad or not inputs:
        raise ValueError(f"receiver input must be some of q, k, v, not {', '.join(bad) or 'nothing'}")


@torch.no_grad()
def path_patching(
    model,
    clean_ids: Tensor,
    corrupt_ids: Tensor,
    metric: PatchMetric,
    receiver: tuple[int, int],
    inputs: tuple[str, ...] = ("q", "k", "v"),
    on_step: Callable[[int, int], None] | None = None,
) -> PatchTable:
    """clean_ids, corrupt_ids (L,) -> values[l][h]: the recovery through the path from head (l, h) to `receiver`
    (layer, head)'s `inputs`, for every sender layer l before the receiver's. Two passes per sender layer (its
    heads batched). Decoder-only models."""
    require_causal(model.config, "path patching")
    _check(model, receiver, inputs)
    target, head = receiver
    z_points = layer_points(model.config, "attn.hook_z")[:target]
    reads = [f"blocks.{target}.attn.hook_{name}" for name in inputs]
    m_clean, m_corrupt, clean_cache = measured(model, metric, clean_ids, corrupt_ids, [None, None], z_points)
    _, frozen = run_with_cache(model, corrupt_ids[None], names=z_points)
    group = model.config.heads // model.config.n_kv_heads
    batch = corrupt_ids.expand(model.config.heads, -1)  # (H, L): row h sends from head h
    values = []
    for sender in range(target):
        hooks = [
            (p, _sender_hook(clean_cache[p][0], frozen[p][0], layer == sender))
            for layer, p in enumerate(z_points)
            if layer >= sender
        ]
        with attached(model, hooks):
            _, seen = run_with_cache(model, batch, names=reads)
        put = [(p, _put(seen[p], head if p.endswith("hook_q") else head // group)) for p in reads]
        patched = metric(run_with_hooks(model, batch, hooks=put))  # (H,)
        values.append(((patched - m_corrupt) / (m_clean - m_corrupt)).tolist())
        if on_step is not None:
            on_step(sender + 1, target)
    kind = f"path L{target}H{head} {'+'.join(inputs)}"
    return PatchTable(m_clean, m_corrupt, values, z_points, kind, metric.kind, gap_warning(metric, m_clean, m_corrupt))
