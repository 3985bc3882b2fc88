"""The logit lens (nostalgebraist 2020): read the residual stream as if the model stopped there.

Every residual point (the stream before each block, then after the last) goes through the model's own
final norm and unembedding. The stream before block i is transformers' `hidden_states[i]`; the lens after
the last block is the model's logits.
Dimension legend: P points (layers + 1), N batch, L length, V vocab, K top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from tui_lab.mechanism.cache import layer_points, require_causal, run_with_cache
from tui_lab.mechanism.tokens import token_text


def residual_points(config) -> list[str]:
    """`blocks.{l}.hook_resid_pre` for every layer, then the last block's `hook_resid_post`."""
    return [*layer_points(config, "hook_resid_pre"), f"blocks.{config.decoder_layers - 1}.hook_resid_post"]


def unembed(model, resid: Tensor) -> Tensor:
    """(..., L, E) residual stream -> (..., L, V) logits: the final norm (when the model has one), then lm_head."""
    normed = model.decoder_norm(resid) if model.decoder_norm is not None else resid
    return model.lm_head(normed * model.out_scale)  # T5's d_model^-0.5 before the output layer (1 elsewhere)


@torch.no_grad()
def lens_logits(model, ids: Tensor) -> tuple[list[str], Tensor]:
    """The points and their lens logits (P, N, L, V) for ids (N, L)."""
    require_causal(model.config, "lens")
    points = residual_points(model.config)
    _, cache = run_with_cache(model, ids, names=points)
    return points, unembed(model, cache.stack(points))


@dataclass
class LensTable:
    """points x positions: the top token there, its probability, the top-k, and the probability the
    lens gives the token that actually comes next (None at the last position)."""

    points: list[str]
    tokens: list[str]  # the prompt's tokens, one per position
    ids: list[int]
    top: list[list[list[dict[str, Any]]]] = field(default_factory=list)  # [point][position] -> top-k
    next_prob: list[list[float | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for p, point in enumerate(self.points):
            cells = [{"position": t, "token": self.tokens[t], "top_token": self.top[p][t][0]["token"],
                      "top_id": self.top[p][t][0]["id"], "top_prob": self.top[p][t][0]["prob"],
                      "top_k": self.top[p][t], "next_prob": self.next_prob[p][t]}
                     for t in range(len(self.tokens))]
            rows.append({"point": point, "cells": cells})
        return {"points": self.points, "tokens": self.tokens, "ids": self.ids, "rows": rows}


def logit_lens(model, codec, ids: list[int], k: int = 5) -> LensTable:
    """The lens of one prompt as a table; `codec` names the tokens."""
    if not ids:
        raise ValueError("prompt: the logit lens needs at least one token")
    points, logits = lens_logits(model, torch.tensor([ids], device=next(model.parameters()).device))
    probs = torch.softmax(logits[:, 0].float(), dim=-1)  # (P, L, V)
    values, top_ids = probs.topk(min(k, probs.shape[-1]), dim=-1)  # (P, L, K)
    table = LensTable(points, [token_text(codec, i) for i in ids], list(ids))
    following = torch.tensor(ids[1:], device=probs.device)
    nexts = probs[:, :-1].gather(-1, following.expand(len(points), -1)[..., None])[..., 0]  # (P, L-1)
    texts: dict[int, str] = {}
    for p in range(len(points)):
        table.top.append([[{"id": int(i), "token": texts.setdefault(int(i), token_text(codec, int(i))),
                            "prob": float(v)} for i, v in zip(top_ids[p, t], values[p, t], strict=True)]
                          for t in range(len(ids))])
        table.next_prob.append([*(float(x) for x in nexts[p]), None])
    return table
