"""Self-attention that never forms the L x L score matrix: Linformer's low-rank keys, Performer's random features.

Linformer (Wang et al. 2020, section 4): keys and values are projected along the sequence, K' = E^T K and
V' = F^T V with E, F (n, k), n = max_len; a shorter input uses E's first L rows. softmax(Q K'^T) V' costs
L x k, not L x L. Every projected key mixes every position, so it is for encoders only (config refuses a decoder).
Performer (Choromanski et al. 2021, FAVOR+): exp(q.k) ~ phi(q).phi(k) with positive random features
phi(x) = exp(w.x - |x|^2 / 2) / sqrt(m), the m rows w drawn orthogonal in blocks of D and rescaled to Gaussian
norms (section 2.4). They are a buffer: saved in checkpoints, never redrawn. A decoder uses the causal
prefix-sum form (section 2.6), computed in chunks; its KV cache is the running sums (`PerformerState`).

Dimension legend: N batch, H heads, K kv heads, L queries, S keys, D d_head, k Linformer rows, m features,
C chunk length.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

CHUNK = 128  # the causal form's block: quadratic inside it (C x C), running sums across blocks


class LinformerProjection(nn.Module):
    """E and F (P, n, k): P = 1 shared by the heads ('headwise'), one per kv head ('none'); 'key-value' uses
    E for both. No bias, as the paper's linear projections."""

    def __init__(self, config) -> None:
        super().__init__()
        n, k = config.max_len, config.linformer_rows
        p = config.n_kv_heads if config.linformer_sharing == "none" else 1
        bound = 1 / math.sqrt(k)  # the paper's JL-style scale: K' rows keep K's magnitude on average
        self.e = nn.Parameter(torch.empty(p, n, k).uniform_(-bound, bound))
        self.f = None if config.linformer_sharing == "key-value" else \
            nn.Parameter(torch.empty(p, n, k).uniform_(-bound, bound))

    def forward(self, k: Tensor, v: Tensor, allowed: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
        """k, v (N, K, S, D) -> K', V' (N, K, k, D), and F's rows in use (P, S, k) for the effective pattern."""
        s = k.shape[-2]
        if s > self.e.shape[1]:
            raise ValueError(f"linformer projects max_len ({self.e.shape[1]}) positions; this input has {s}")
        if allowed is not None:  # (N, 1, 1, S) key padding: a padded position adds nothing to any projected row
            keep = allowed[..., -1:, :].transpose(-1, -2)  # (N, 1, S, 1)
            k, v = k.masked_fill(~keep, 0.0), v.masked_fill(~keep, 0.0)
        e = self.e[:, :s]
        f = e if self.f is None else self.f[:, :s]
        return torch.einsum("psk,npsd->npkd", e, k), torch.einsum("psk,npsd->npkd", f, v), f


def linformer_attend(proj: LinformerProjection, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None,
                     scale: float | None, dropout_p: float, attend: Callable, pattern_hook=None, scores_hook=None
                     ) -> Tensor:
    """softmax(q K'^T * scale) V' -> (N, H, L, D). Hooked, the pattern is the effective weight of each position's
    value, softmax(q K'^T) F^T (N, H, L, S): rows need not sum to 1, but out = pattern @ v exactly.
    `attend` is `model.scaled_dot.attend`, passed in by the attention layer (model/attention.py)."""
    kp, vp, f = proj(k, v, allowed)
    if pattern_hook is None and scores_hook is None:
        return attend(q, kp, vp, None, None, False, dropout_p, False, scale)[0]
    heads, group = q.shape[1], q.shape[1] // kp.shape[1]
    kp, v = kp.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ kp.transpose(-2, -1) * scale  # (N, H, L, k): over projected rows, not positions
    if scores_hook is not None:
        scores = scores_hook(scores)
    weights = torch.softmax(scores, -1)
    f = f.repeat_interleave(heads // f.shape[0], 0) if f.shape[0] > 1 else f  # (1 or H, S, k): per kv head
    effective = weights @ f.transpose(-2, -1)  # (N, H, L, S)
    if allowed is not None:
        effective = effective.masked_fill(~allowed, 0.0)
    if pattern_hook is not None:
        effective = pattern_hook(effective)
    return torch.nn.functional.dropout(effective, dropout_p) @ v


def orthogonal_features(m: int, d: int) -> Tensor:
    """(m, d): blocks of d orthogonal rows (QR of a Gaussian matrix), each row rescaled to the norm of a
    d-dimensional Gaussian vector, so every row is marginally N(0, I) (FAVOR+'s ORFs)."""
    if torch.empty(0).device.type == "meta":  # shapes only (the lab counts on the meta device)
        return torch.empty(m, d)
    blocks = [torch.linalg.qr(torch.randn(d, d))[0].T for _ in range(math.ceil(m / d))]
    return torch.cat(blocks)[:m] * torch.randn(m, d).norm(dim=1, keepdim=True)


class PerformerFeatures(nn.Module):
    """phi for one layer, shared by its heads: the features `w` (m, D) are a buffer, drawn once here."""

    def __init__(self, config) -> None:
        super().__init__()
        self.register_buffer("w", orthogonal_features(config.n_features, config.d_head))

    def forward(self, x: Tensor, scale: float, is_query: bool) -> Tensor:
        """x (N, H, L, D) -> phi(x) (N, H, L, m) for exp(scale q.k). Stabilisers cancel in the normalisation:
        a query's own max; for keys the fixed max_i |w_i|^2 / 2, which bounds w.x - |x|^2/2 from above (so no
        overflow) and is the same at every step (so a cached decode equals a full pass)."""
        x = x * scale ** 0.5
        w = self.w.to(x.dtype)
        proj = x @ w.T - (x * x).sum(-1, keepdim=True) / 2  # (N, H, L, m)
        shift = proj.amax(-1, keepdim=True).detach() if is_query else (w * w).sum(-1).amax() / 2
        return torch.exp(proj - shift) / math.sqrt(w.shape[0])


class PerformerState:
    """A decoder layer's Performer cache: the running sums of every position seen so far, whatever the length.

    `k` holds S = sum_j phi(k_j) v_j^T (N, H, m, D) and `v` holds z = sum_j phi(k_j) (N, H, m, 1), under the
    names KVCache's reorder and byte count read."""

    def __init__(self, batch: int, heads: int, features: int, d_head: int, device, dtype) -> None:
        self.k = torch.zeros((batch, heads, features, d_head), device=device, dtype=dtype)
        self.v = torch.zeros((batch, heads, features, 1), device=device, dtype=dtype)
        self.cross_state: Tensor | None = None  # none beside it; KVCache.reorder reads it on every layer's cache


def performer_attend(phi: PerformerFeatures, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None,
                     causal: bool, scale: float | None, state: PerformerState | None = None,
                     pattern_hook=None) -> Tensor:
    """FAVOR+ attention -> (N, H, L, D); the causal prefix-sum form for a decoder, continuing `state` if given.
    No attention dropout (there are no weights to drop); `pattern_hook` sees the implied weights on an uncached
    pass only (a cached step keeps sums, not the keys it would need)."""
    heads = q.shape[1]
    k, v = k.repeat_interleave(heads // k.shape[1], 1), v.repeat_interleave(heads // v.shape[1], 1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    qf, kf = phi(q, scale, True), phi(k, scale, False)  # (N, H, L, m), (N, H, S, m)
    if allowed is not None:  # key padding (N, 1, 1, S): a padded key adds no feature mass
        kf = kf.masked_fill(~allowed[..., -1:, :].transpose(-1, -2), 0.0)
    if pattern_hook is not None and state is None:
        return _explicit(qf, kf, v, causal, pattern_hook)
    if not causal:
        num, den = qf @ (kf.transpose(-2, -1) @ v), qf @ kf.sum(-2, keepdim=True).transpose(-2, -1)
        return num / den.clamp_min(torch.finfo(den.dtype).tiny)
    return _causal(qf, kf, v, state)


def _explicit(qf: Tensor, kf: Tensor, v: Tensor, causal: bool, pattern_hook) -> Tensor:
    """The same maths with the implied L x S weights formed, for the hooks (the Attention view draws them)."""
    a = qf @ kf.transpose(-2, -1)  # (N, H, L, S)
    if causal:
        a = a.tril(a.shape[-1] - a.shape[-2])
    weights = pattern_hook(a / a.sum(-1, keepdim=True).clamp_min(torch.finfo(a.dtype).tiny))
    return weights @ v


def _causal(qf: Tensor, kf: Tensor, v: Tensor, state: PerformerState | None) -> Tensor:
    """out_i = phi(q_i).S_i / phi(q_i).z_i with S_i, z_i sums over j <= i: blocks of CHUNK, memory O(L m + C^2)."""
    n, h, length, m = qf.shape
    s = qf.new_zeros((n, h, m, v.shape[-1])) if state is None else state.k
    z = qf.new_zeros((n, h, m, 1)) if state is None else state.v
    outs = []
    for i in range(0, length, CHUNK):
        qc, kc, vc = qf[:, :, i:i + CHUNK], kf[:, :, i:i + CHUNK], v[:, :, i:i + CHUNK]
        a = (qc @ kc.transpose(-2, -1)).tril()  # (N, H, C, C): within the block, j <= i
        num, den = a @ vc + qc @ s, a.sum(-1, keepdim=True) + qc @ z
        outs.append(num / den.clamp_min(torch.finfo(den.dtype).tiny))
        s, z = s + kc.transpose(-2, -1) @ vc, z + kc.sum(-2, keepdim=True).transpose(-2, -1)
    if state is not None:
        state.k, state.v = s, z
    return torch.cat(outs, dim=2)


def approximate_attention(config) -> nn.Module | None:
    """The module a SelfAttention layer keeps for its approximation, or None for exact softmax."""
    if config.self_attention == "linformer":
        return LinformerProjection(config)
    if config.self_attention == "performer":
        return PerformerFeatures(config)
    return None
