"""Seed 002's two kinds of guided cross-attention (section 4, Tips 2), the `cross_attention` axis.

Both read where the previous target step looked, so both run step by step over the target, in training too
(no parallel shortcut), and carry that alignment from one decoding step to the next in the KV cache.

- `location-aware` (after Chorowski et al. 2015, section 2.2): they put convolved features f_i = F * a_{i-1}
  of the previous alignment inside additive attention's tanh, e = w . tanh(W s + V h_j + U f_{i,j} + b). This
  is **an adaptation to dot-product scores**: the features move each key, e_{i,j} = q_i . (k_j + U_h f_{i,j}) /
  sqrt(D), i.e. q_i . k_j / sqrt(D) plus (U_h^T q_i) . f_{i,j} / sqrt(D), per head, with its own alignment.
- `monotonic` (Raffel et al. 2017): energies e_{i,j} = q_i . k_j / sqrt(D) + r_h (dot-product in place of the
  paper's additive energy; r a learned offset started negative). Training: p = sigmoid(e + N(0, 1)) and the
  expected alignment a_{i,j} = p_{i,j} sum_{k<=j} a_{i-1,k} prod_{l=k}^{j-1} (1 - p_{i,l}) (their eq. 9) with
  a_0 on the first source word. Eval (decoding, and any eval pass): hard monotonic attention, each step
  scanning forward from where the last one stopped and stopping at the first j with sigmoid(e) >= 0.5
  (their Algorithm 1); a scan that passes the last word gives a zero context, then and at every later step
  (the expected alignment's lost mass: what training optimised, so the two agree when p is 0 or 1).
  **Every head of every decoder layer is monotonic**, each with its own r and its own alignment (the paper
  had one attention: heads = 1 is its case; Ma et al. 2019 made every head monotonic in the same way).

A replaced `hook_pattern` is what meets the values (the recurrence has already used the weights it computed);
`hook_attn_scores` can only be read here.
Dimension legend: N batch, H heads, T target length (this call's new positions), S source length, D d_head,
C location filters.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.analysis.cross_attention import LOCATION_FILTERS, LOCATION_WIDTH, MONOTONIC_NOISE_STD, MONOTONIC_R_INIT
from tui_lab.model.attention import CrossAttention
from tui_lab.model.attention_hooks import head_output, hook_heads
from tui_lab.model.hooks import HookScope
from tui_lab.model.scaled_dot import merge_heads, split_heads


def first_word(like: Tensor) -> Tensor:
    """a_0 (N, H, S): all of the alignment on the first source word, where both kinds start."""
    start = torch.zeros_like(like)
    start[..., 0] = 1.0
    return start


class GuidedCrossAttention(CrossAttention):
    """Cross-attention whose step i reads step i-1's alignment: a loop over the target, state in the cache."""

    def forward(self, x: Tensor, memory_kv: tuple[Tensor, Tensor], allowed: Tensor | None = None,
                hooks: HookScope | None = None, start: int = 0, cache=None) -> Tensor:
        q = self.q(x)
        if hooks is not None:
            q = hook_heads(hooks, "hook_q", q, self.heads)
        q = split_heads(q, self.heads)  # (N, H, T, D)
        k, v = memory_kv  # (N, K, S, D)
        if k.shape[1] != self.heads:  # grouped-query: query head h reads kv head h // (H/K)
            group = self.heads // k.shape[1]
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        keep = None if allowed is None else allowed[:, :, 0, :]  # (N, 1, S) True on real source words
        state = cache.cross_state if cache is not None and start > 0 else None
        scores, weights, state = self.recur(q, k, keep, state)  # (N, H, T, S) twice
        if cache is not None:
            cache.cross_state = state
        if hooks is not None:
            if hooks.wants("hook_attn_scores") and hooks("hook_attn_scores", scores) is not scores:  # read only
                raise ValueError("cross_attn.hook_attn_scores can only be read in a guided cross-attention "
                                 "(location-aware, monotonic): each step's scores were used by the next; replace "
                                 "cross_attn.hook_pattern instead")
            weights = hooks("hook_pattern", weights) if hooks.wants("hook_pattern") else weights
        out = F.dropout(weights, self.dropout if self.training else 0.0) @ v  # (N, H, T, D)
        return self.out(merge_heads(out)) if hooks is None else head_output(self.out, hooks, out)

    def content_scores(self, q: Tensor, k: Tensor) -> Tensor:
        """q . k / sqrt(D) (or unscaled, attention_scale 'none') for every step at once: (N, H, T, S)."""
        scale = self.scale if self.scale is not None else q.shape[-1] ** -0.5
        return (q @ k.transpose(-2, -1)) * scale

    def recur(self, q: Tensor, k: Tensor, keep: Tensor | None, state) -> tuple[Tensor, Tensor, Tensor]:
        raise NotImplementedError


class LocationAwareCrossAttention(GuidedCrossAttention):
    """Softmax over q . (k + U f) / sqrt(D), f the convolved previous alignment (an adaptation of Chorowski's
    additive form to dot products, named as one in the module's docstring)."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.location_conv = nn.Conv1d(1, LOCATION_FILTERS, LOCATION_WIDTH, padding=LOCATION_WIDTH // 2, bias=False)
        self.location_proj = nn.Linear(LOCATION_FILTERS, config.d_model, bias=False)  # into every head's keys

    def recur(self, q: Tensor, k: Tensor, keep: Tensor | None, prev: Tensor | None
              ) -> tuple[Tensor, Tensor, Tensor]:
        n, h, t_len, d = q.shape
        content = self.content_scores(q, k)  # (N, H, T, S)
        scale = self.scale if self.scale is not None else d ** -0.5
        u = self.location_proj.weight.view(h, d, LOCATION_FILTERS)  # (H, D, C): head h's slice of U
        qu = torch.einsum("nhtd,hdc->nhtc", q, u) * scale  # (N, H, T, C): U_h^T q_i, no alignment needed yet
        prev = first_word(content[:, :, 0]) if prev is None else prev  # (N, H, S)
        scores, weights = [], []
        for i in range(t_len):  # the recurrence: step i's scores need step i-1's alignment
            f = self.location_conv(prev.reshape(n * h, 1, -1)).view(n, h, LOCATION_FILTERS, -1)  # (N, H, C, S)
            s = content[:, :, i] + torch.einsum("nhc,nhcs->nhs", qu[:, :, i], f)
            if keep is not None:
                s = s.masked_fill(~keep, float("-inf"))
            prev = torch.softmax(s, dim=-1)
            scores.append(s)
            weights.append(prev)
        return torch.stack(scores, 2), torch.stack(weights, 2), prev


class MonotonicCrossAttention(GuidedCrossAttention):
    """Raffel et al. 2017: expected alignment in training, hard monotonic attention in eval."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.r = nn.Parameter(torch.full((config.heads,), MONOTONIC_R_INIT))  # one offset per head

    def energies(self, q: Tensor, k: Tensor, keep: Tensor | None) -> Tensor:
        """e = q . k / sqrt(D) + r_h, padded source words at -inf (p = 0: never stopped at): (N, H, T, S)."""
        e = self.content_scores(q, k) + self.r[None, :, None, None]
        return e if keep is None else e.masked_fill(~keep[:, :, None, :], float("-inf"))

    def recur(self, q: Tensor, k: Tensor, keep: Tensor | None, state: Tensor | None
              ) -> tuple[Tensor, Tensor, Tensor]:
        e = self.energies(q, k, keep)
        if self.training:
            noisy = e + MONOTONIC_NOISE_STD * torch.randn_like(e)  # section 2.5: pushes p toward 0 or 1
            prev = first_word(e[:, :, 0]) if state is None else state
            weights = []
            for i in range(e.shape[2]):
                prev = expected_alignment(noisy[:, :, i], prev)
                weights.append(prev)
            return e, torch.stack(weights, 2), prev
        where = torch.zeros(e.shape[:2], dtype=torch.long, device=e.device) if state is None else state
        weights = []
        for i in range(e.shape[2]):
            row, where = hard_alignment(e[:, :, i], where)
            weights.append(row)
        return e, torch.stack(weights, 2), where


def expected_alignment(energy: Tensor, prev: Tensor) -> Tensor:
    """One step of Raffel et al.'s expected alignment, in closed form over the source (..., S).

    a_j = p_j sum_{k<=j} prev_k prod_{l=k}^{j-1} (1 - p_l), p = sigmoid(energy). The products are
    exp(C_j - C_k) with C the exclusive cumulative sum of log(1 - p) = logsigmoid(-energy): no division by a
    vanishing cumprod (the paper's eq. 12 form), and every exponent <= 0."""
    log_skip = F.logsigmoid(-energy)  # log(1 - p), exact where p is near 1; 0 at -inf energies
    c = torch.cumsum(log_skip, -1) - log_skip  # exclusive: C_j = sum_{l<j} log(1 - p_l)
    s = energy.shape[-1]
    later = torch.ones(s, s, dtype=torch.bool, device=energy.device).triu()  # [k, j]: k <= j
    span = (c[..., None, :] - c[..., :, None]).masked_fill(~later, float("-inf"))  # (..., S_k, S_j)
    reach = (prev[..., None, :] @ span.exp()).squeeze(-2)  # (..., S): mass still moving on at j
    return torch.sigmoid(energy) * reach


def hard_alignment(energy: Tensor, where: Tensor) -> tuple[Tensor, Tensor]:
    """Algorithm 1's step: from `where` (N, H) scan forward, stop at the first j with sigmoid(e_j) >= 0.5.

    Returns the one-hot row (N, H, S) (all zero when nothing is stopped at: a zero context) and where the next
    step starts: the stop, or S (past the end: nothing more is attended, as the expected alignment's lost mass)."""
    s = energy.shape[-1]
    j = torch.arange(s, device=energy.device)
    stops = (energy >= 0) & (j >= where[..., None])  # (N, H, S)
    found = stops.any(-1)
    first = torch.where(stops, j, s).amin(-1).clamp(max=s - 1)  # the first stop (s - 1 when none)
    row = F.one_hot(first, s).to(energy.dtype) * found[..., None].to(energy.dtype)
    return row, torch.where(found, first, torch.full_like(where, s))


CROSS_KINDS: dict[str, type[CrossAttention]] = {"softmax": CrossAttention,
                                                "location-aware": LocationAwareCrossAttention,
                                                "monotonic": MonotonicCrossAttention}


def make_cross(config) -> CrossAttention:
    """The decoder block's cross-attention for `config.cross_attention`."""
    return CROSS_KINDS[config.cross_attention](config)
