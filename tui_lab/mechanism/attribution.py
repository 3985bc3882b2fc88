"""Why two layers: each head's direct effect on the answer, and how heads of two layers compose.

Direct logit attribution: a head writes z_h @ W_O^h into the residual stream; with the final norm's scale
frozen at the value it had (the norm is then affine), that write's share of logit(answer) - logit(wrong)
is (centred for LayerNorm) / scale * gamma @ (W_U[answer] - W_U[wrong]). The shares of every writer (the
embeddings, each head, the output biases, each MLP) plus the norm's bias term add up to the logit difference.

Two conventions (`convention`): "lab" keeps each head's constant value term, (ln1.b @ W_V + b_V) @ W_O (the
attention weights sum to 1, so every head adds it whatever it attends to), inside that head, as its `hook_z`
holds it. "tl" is TransformerLens's `from_pretrained` default (fold_ln, center_writing_weights, center_unembed,
fold_value_biases): the constant moves into the output bias b_O, so a head's share is its write less that
constant, and W_U is centred over the vocabulary (W_U - its mean over tokens), which leaves a logit difference
unchanged but moves a single token's attribution. On the English toy's river/hill prompt the two differ by up to
0.016 per head for logit(' river') - logit(' hill') and 0.22 for logit(' river') alone, which reorders its heads.

Composition (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"): how much a later head's
Q, K or V reads what an earlier head's OV circuit writes, ||W_OV^a W^b||_F / (||W_OV^a||_F ||W^b||_F) with
W^b = W_QK^b (Q), W_QK^b^T (K), W_OV^b (V). As TransformerLens with fold_ln and center_writing_weights:
each head's norm weight gamma is folded into its W_Q/W_K/W_V, and for LayerNorm models those are centred over
d_model and W_O over its output (the norm removes the mean). RoPE is left out (the rotation depends on the
positions): the scores read the unrotated weights, as TransformerLens's; `rotary=True` averages the Q and K
scores over the relative rotations a RoPE model's queries and keys go through.
Dimension legend: N batch, L length, H heads, D d_head, E d_model, V vocab.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from tui_lab.mechanism.cache import layer_points, require_causal, run_with_cache
from tui_lab.mechanism.heads import HeadWeights, head_weights, output_slice

COMPOSITIONS = ("Q", "K", "V")
CONVENTIONS = ("lab", "tl")


def frozen_norm(model, writes: Tensor, resid: Tensor) -> Tensor:
    """writes (..., E) through the final norm with its scale frozen at the stream `resid` (E,): the linear part."""
    norm = model.decoder_norm
    if norm is None:
        return writes
    if isinstance(norm, nn.LayerNorm):
        centred = writes - writes.mean(dim=-1, keepdim=True)
        scale = (resid.var(unbiased=False) + norm.eps).sqrt()
        return centred / scale * (norm.weight if norm.weight is not None else 1.0)
    if isinstance(norm, nn.RMSNorm):
        eps = norm.eps if norm.eps is not None else torch.finfo(resid.dtype).eps
        return writes / (resid.pow(2).mean() + eps).sqrt() * norm.weight
    raise ValueError(f"attribution: the final norm {type(norm).__name__} has no frozen linear form")


def logit_direction(model, answer: int, wrong: int | None, centred: bool = False) -> Tensor:
    """(E,): W_U[answer] - W_U[wrong] (or W_U[answer]); `centred`: W_U less its mean over the vocabulary first
    (TransformerLens's center_unembed; a difference is unchanged)."""
    w = model.lm_head.weight * model.out_scale  # T5 scales the state by d_model^-0.5 first (1 elsewhere)
    if wrong is not None:
        return w[answer] - w[wrong]
    return w[answer] - w.mean(dim=0) if centred else w[answer]


def value_constant(block) -> Tensor:
    """(H, D): each head's constant part of every value vector, ln1.b @ W_V + b_V (zero without biases): the
    attention weights sum to 1, so z carries it whatever the head attends to."""
    attn = block.attn
    e = attn.out.weight.shape[0]
    d = e // attn.heads
    beta = getattr(block.attn_norm, "bias", None)
    rows = []
    for head in range(attn.heads):
        kv = head // (attn.heads // attn.kv_heads)
        start = e + attn.kv_heads * d + kv * d
        const = torch.zeros(d, dtype=attn.qkv.weight.dtype, device=attn.qkv.weight.device)
        if beta is not None:
            const = const + beta @ head_weights(block, head).v
        if attn.qkv.bias is not None:
            const = const + attn.qkv.bias[start:start + d]
        rows.append(const)
    return torch.stack(rows)


@torch.no_grad()
def head_logit_attribution(model, ids: Tensor, answer: int, wrong: int | None = None, position: int = -1,
                           convention: str = "lab") -> Tensor:
    """(layers, heads): each head's direct share of logit(answer) (- logit(wrong)) at `position` of ids (L,), in
    the lab's convention or TransformerLens's ("tl": the value constant in b_O, W_U centred; see the module)."""
    require_causal(model.config, "attribution")
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}, not {convention!r}")
    if model.config.norm_position != "pre":
        raise ValueError("attribution: a post-LN model renormalises the stream after every sublayer; "
                         "direct logit attribution needs pre-LN (norm_position 'pre')")
    last = f"blocks.{model.config.decoder_layers - 1}.hook_resid_post"
    points = layer_points(model.config, "attn.hook_z")
    _, cache = run_with_cache(model, ids[None], names=[*points, last])
    resid, direction = cache[last][0, position], logit_direction(model, answer, wrong, centred=convention == "tl")
    rows = []
    for block, point in zip(model.decoder, points, strict=True):
        z = cache[point][0, position]  # (H, D)
        if convention == "tl":
            z = z - value_constant(block)
        writes = torch.stack([z[h] @ output_slice(block, h) for h in range(z.shape[0])])  # (H, E)
        rows.append(frozen_norm(model, writes, resid) @ direction)
    return torch.stack(rows)


def folded(model, layer: int, head: int) -> HeadWeights:
    """A head's matrices as TransformerLens's fold_ln and center_writing_weights leave them: its norm's gamma
    folded into W_Q/W_K/W_V; for LayerNorm (whose output has zero mean) those reading weights centred over
    d_model and W_O centred over its output (the part along the all-ones direction is removed anyway)."""
    block = model.decoder[layer]
    w = head_weights(block, head)
    gamma = block.attn_norm.weight[:, None] if getattr(block.attn_norm, "weight", None) is not None else 1.0
    q, k, v = gamma * w.q, gamma * w.k, gamma * w.v  # (E, D)
    if not isinstance(block.attn_norm, nn.LayerNorm):
        return HeadWeights(q=q, k=k, v=v, o=w.o)
    q, k, v = (m - m.mean(dim=0, keepdim=True) for m in (q, k, v))
    return HeadWeights(q=q, k=k, v=v, o=w.o - w.o.mean(dim=-1, keepdim=True))


def _product_norm(left: Tensor, mid: Tensor, right: Tensor) -> Tensor:
    """||left @ mid @ right^T||_F through D x D Gram matrices (never an E x E product): left, right (E, D)."""
    gram_l, gram_r = left.T @ left, right.T @ right
    return torch.trace(gram_l @ mid @ gram_r @ mid.T).clamp(min=0).sqrt()


def _reader(w: HeadWeights, kind: str) -> tuple[Tensor, Tensor]:
    """(X, Y), both (E, D), with the later head's reading circuit X Y^T: Q: W_QK, K: W_QK^T, V: W_OV."""
    return {"Q": (w.q, w.k), "K": (w.k, w.q), "V": (w.v, w.o.T)}[kind]


def rope_rotation(d_head: int, offset: int, base: float) -> Tensor:
    """(D, D) float64: RoPE's relative rotation R_offset, q_i k_j^T = x_i W_Q R_(i-j) W_K^T x_j^T, in the row-vector
    convention of `positions.apply_rope` (adjacent pairs (2p, 2p+1) turned by offset * base^(-2p/D))."""
    theta = offset / base ** (torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    c, s = theta.cos(), theta.sin()
    r = torch.zeros(d_head, d_head, dtype=torch.float64)
    even = torch.arange(0, d_head, 2)
    r[even, even], r[even, even + 1], r[even + 1, even], r[even + 1, even + 1] = c, s, -s, c
    return r


def _score(a: HeadWeights, x: Tensor, y: Tensor) -> Tensor:
    """||W_OV^a X Y^T|| / (||W_OV^a|| ||X Y^T||)."""
    eye = torch.eye(a.o.shape[0], dtype=torch.float64, device=a.o.device)
    # W_OV^a R^b = V_a (O_a X) Y^T; ||W_OV^a|| = ||V_a I O_a||; ||R^b|| = ||X I Y^T||
    return _product_norm(a.v, a.o @ x, y) / (_product_norm(a.v, eye, a.o.T) * _product_norm(x, eye, y))


@torch.no_grad()
def composition_score(model, first: tuple[int, int], second: tuple[int, int], kind: str = "K",
                      rotary: bool = False) -> float:
    """How much head `second` (layer, head)'s Q, K or V reads what head `first` (an earlier layer) writes:
    ||W_OV^a R^b||_F / (||W_OV^a||_F ||R^b||_F), 1 when aligned, about sqrt(D/E) for random weights.

    `rotary` (a RoPE model, Q or K): what the keys and queries actually go through. The QK circuit at relative
    offset t is W_Q R_t W_K^T, so the score is the mean over every offset t = 0..max_len-1 a causal query can
    look back (TransformerLens, and the default, read the unrotated W_Q W_K^T, which is the offset-0 term)."""
    if kind not in COMPOSITIONS:
        raise ValueError(f"composition must be one of {', '.join(COMPOSITIONS)}, not {kind!r}")
    if first[0] >= second[0]:
        raise ValueError(f"composition: head {first} must sit in an earlier layer than head {second}")
    a, b = (_double(folded(model, *head)) for head in (first, second))
    x, y = _reader(b, kind)
    if not rotary or kind == "V" or model.config.positions != "rope":
        return float(_score(a, x, y))
    d, base = b.q.shape[1], model.config.rope_base
    # K reads W_QK(t)^T = W_K R_t^T W_Q^T; Q reads W_QK(t) = W_Q R_t W_K^T
    rotations = (rope_rotation(d, t, base).to(x.device) for t in range(model.config.max_len))
    scores = [_score(a, x @ (r.T if kind == "K" else r), y) for r in rotations]
    return float(torch.stack(scores).mean())


@torch.no_grad()
def composition_scores(model, kind: str = "K", rotary: bool = False) -> Tensor:
    """(layers, heads, layers, heads): score[l1, h1, l2, h2] for l1 < l2, zero elsewhere (as TransformerLens);
    `rotary`: RoPE's rotation taken into the Q and K scores (`composition_score`)."""
    require_causal(model.config, "composition")
    layers, heads = model.config.decoder_layers, model.config.heads
    scores = torch.zeros(layers, heads, layers, heads, dtype=torch.float64)
    for l1 in range(layers):
        for h1 in range(heads):
            for l2 in range(l1 + 1, layers):
                for h2 in range(heads):
                    scores[l1, h1, l2, h2] = composition_score(model, (l1, h1), (l2, h2), kind, rotary)
    return scores


def _double(w: HeadWeights) -> HeadWeights:
    return HeadWeights(*(t.double() for t in (w.q, w.k, w.v, w.o)))
