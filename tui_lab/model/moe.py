"""Sparse mixture-of-experts FFN (Switch Transformer, Fedus et al. 2021; Mixtral, Jiang et al. 2024).

A router (Linear E -> X, no bias) scores every expert for each token; the token goes through its top-k
experts and their outputs are summed, weighted by the router's probabilities renormalised over the k chosen
(Mixtral's order, as transformers' MixtralTopKRouter: softmax over all X, then top-k, then divide by their
sum). Each expert is an ordinary FeedForward of the config's activation and d_ff; Mixtral's checkpoint names
map as w1 -> gate, w3 -> up, w2 -> down.

What the router chose leaves the module as a typed value: `record_routing(model)` hooks the routers for one
pass and yields `Routing(layer, logits)` records, from which the load-balancing loss and the expert load
are computed (the chosen experts are a pure function of the logits).
Dimension legend: N batch, L length, E d_model, X experts, K experts_per_token, T = N * L tokens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.model.feed_forward import FeedForward


def route(logits: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """(T, X) router logits -> (weights (T, K) float32 summing to 1 per token, chosen experts (T, K))."""
    probs = F.softmax(logits.float(), dim=-1)  # in float32, as Mixtral does, whatever the model's dtype
    top, chosen = torch.topk(probs, k, dim=-1)
    return top / top.sum(dim=-1, keepdim=True), chosen


class SparseMoE(nn.Module):
    """(N, L, E) -> (N, L, E): each token through K of X FeedForward experts, mixed by the router."""

    def __init__(self, config) -> None:
        super().__init__()
        self.top_k = config.experts_per_token
        self.router = nn.Linear(config.d_model, config.experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(config) for _ in range(config.experts))

    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])  # (T, E)
        weights, chosen = route(self.router(flat), self.top_k)  # (T, K) each
        out = torch.zeros_like(flat)
        for i, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == i)  # the tokens that picked expert i, and in which of K slots
            if token.numel():
                mixed = expert(flat[token]) * weights[token, slot, None].to(flat.dtype)
                out.index_add_(0, token, mixed)
        return out.reshape(x.shape)


@dataclass
class Routing:
    layer: str  # the block's module path, e.g. "decoder.3"
    logits: Tensor  # (T, X) router logits of one pass, tokens in (N, L) order


@contextlib.contextmanager
def record_routing(model: nn.Module) -> Iterator[list[Routing]]:
    """Yield a list that fills with one Routing per MoE layer run inside the block (in the order they ran).

    Forward hooks on the routers, removed on exit: nothing stays on the model after the pass."""
    records: list[Routing] = []
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, SparseMoE):
            layer = name.removesuffix(".ffn")
            handles.append(module.router.register_forward_hook(_keeper(records, layer)))
    try:
        yield records
    finally:
        for handle in handles:
            handle.remove()


def _keeper(records: list[Routing], layer: str):
    def hook(module, inputs, output):  # returns None: the output passes on untouched
        records.append(Routing(layer, output))
    return hook


def load_balancing_loss(routing: list[Routing], experts: int, k: int, masks: dict[str, Tensor] | None = None) -> Tensor:
    """Switch's auxiliary loss, X * sum_i f_i * P_i over all layers (transformers' load_balancing_loss_func).

    f_i: the fraction of token slots sent to expert i (the K choices of each token, so sum_i f_i = K);
    P_i: the router's mean probability for expert i. Balanced routing gives K, its minimum for uniform
    probabilities. `masks` maps a stack ("encoder"/"decoder") to its (N, L) True-on-real-token mask, so
    padding counts nowhere.
    """
    device = routing[0].logits.device
    sent, prob, rows = torch.zeros(experts, device=device), torch.zeros(experts, device=device), 0.0
    for record in routing:
        probs = F.softmax(record.logits.float(), dim=-1)  # (T, X)
        chosen = torch.topk(probs, k, dim=-1).indices  # (T, K)
        real = _real_tokens(record, masks, probs)
        sent = sent + torch.zeros(experts, device=device).scatter_add_(0, chosen.reshape(-1), real.repeat_interleave(k))
        prob = prob + (probs * real[:, None]).sum(dim=0)
        rows = rows + real.sum()
    return experts * torch.sum((sent / rows) * (prob / rows))


def expert_load(routing: list[Routing], experts: int, k: int, masks: dict[str, Tensor] | None = None) -> Tensor:
    """(layers, X) how many real tokens each layer routed to each expert (each token counts in K columns)."""
    rows = []
    for record in routing:
        chosen = route(record.logits.detach(), k)[1]  # (T, K)
        real = _real_tokens(record, masks, chosen)
        rows.append(torch.zeros(experts, device=chosen.device).scatter_add_(
            0, chosen.reshape(-1), real.repeat_interleave(k)))
    return torch.stack(rows)


def _real_tokens(record: Routing, masks: dict[str, Tensor] | None, like: Tensor) -> Tensor:
    """(T,) float 1 on the tokens that count, 0 on padding."""
    mask = (masks or {}).get(record.layer.split(".")[0])
    if mask is None:
        return torch.ones(like.shape[0], device=like.device)
    return mask.reshape(-1).to(device=like.device, dtype=torch.float32)
