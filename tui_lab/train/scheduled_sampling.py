"""Scheduled sampling (Bengio et al. 2015): feed the decoder its own predictions more and more often.

Exposure bias: teacher forcing trains the decoder on gold previous tokens, but at inference it reads its
own. At step i the gold token is fed with probability p_i, which decays by one of the paper's schedules
(section 2.1): linear max(eps, k - c i) with k = 1, exponential k^i (k < 1), inverse sigmoid k / (k + exp(i / k))
(k >= 1). Training is two-pass: predict every position with teacher forcing (no gradient), then replace each
decoder input by the model's own argmax with probability 1 - p and train on the mixed inputs.

The rate `scheduled_sampling_k` (linear: the slope c; exponential: k; inverse sigmoid: k) defaults to a value
that fits the run's length: linear reaches `scheduled_sampling_min` at the last step, exponential and inverse
sigmoid end near 0.01 (inverse sigmoid crosses 0.5 at about 40% of the run).
Dimension legend: N batch, T target length, V vocab.
"""

from __future__ import annotations

import math
from dataclasses import replace

SCHEDULED_SAMPLING = ("none", "linear", "exponential", "inverse_sigmoid")
END_PROBABILITY = 0.01  # where the default exponential schedule ends
SIGMOID_MIDPOINT = 0.4  # the default inverse sigmoid crosses 0.5 at this share of the run


def default_rate(schedule: str, steps: int, floor: float = 0.0) -> float:
    """The schedule's rate parameter when none is given, from the run's length."""
    if schedule == "linear":
        return (1.0 - floor) / max(1, steps)
    if schedule == "exponential":
        return END_PROBABILITY ** (1.0 / max(1, steps))
    if schedule == "inverse_sigmoid":
        return _sigmoid_k(SIGMOID_MIDPOINT * steps)
    raise ValueError(f"scheduled_sampling ({schedule!r}) has no rate; must be one of: {', '.join(SCHEDULED_SAMPLING)}")


def _sigmoid_k(midpoint: float) -> float:
    """The k >= 1 whose inverse sigmoid crosses 0.5 at `midpoint` steps (exp(i / k) = k, i.e. k ln k = i)."""
    lo, hi = 1.0, max(2.0, midpoint)
    for _ in range(60):  # bisection: k ln k grows monotonically for k >= 1
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid * math.log(mid) < midpoint else (lo, mid)
    return (lo + hi) / 2


def rate(c) -> float | None:
    """The rate the run uses (given or default); None without scheduled sampling. `c` is a TrainConfig."""
    if c.scheduled_sampling == "none":
        return None
    if c.scheduled_sampling_k is not None:
        return float(c.scheduled_sampling_k)
    return default_rate(c.scheduled_sampling, c.steps, c.scheduled_sampling_min)


def teacher_forcing(step: int, c) -> float:
    """p_i: the probability of feeding the gold previous token at (0-based) step `step`."""
    schedule, k = c.scheduled_sampling, rate(c)
    if schedule == "none":
        return 1.0
    if schedule == "linear":
        return max(c.scheduled_sampling_min, 1.0 - k * step)
    if schedule == "exponential":
        return k ** step
    return k / (k + math.exp(min(step / k, 700.0)))  # inverse sigmoid; the clamp keeps exp finite


def check_rate(schedule: str, k: float | None) -> str | None:
    """The rule a given rate breaks, as one line; None when it is fine."""
    if k is None:
        return None
    if schedule == "none":
        return "scheduled_sampling_k needs scheduled_sampling linear, exponential or inverse_sigmoid"
    if schedule == "linear" and not k > 0:
        return f"scheduled_sampling_k ({k!r}) must be > 0 for linear (the slope c in max(eps, 1 - c i))"
    if schedule == "exponential" and not 0 < k < 1:
        return f"scheduled_sampling_k ({k!r}) must be in (0, 1) for exponential (k^i)"
    if schedule == "inverse_sigmoid" and not k >= 1:
        return f"scheduled_sampling_k ({k!r}) must be at least 1 for inverse_sigmoid (k / (k + exp(i / k)))"
    return None


def sampled_inputs(model, batch, p: float):
    """The batch with each decoder input after bos replaced, with probability 1 - p, by the model's own
    argmax prediction for that position (from a teacher-forced pass). Draws from torch's global RNG, which
    the trainer swaps for its own (so a resumed run draws the same)."""
    import torch  # here, so the config (and the app's first frame) can read the formulas without torch

    if p >= 1.0 or batch.tgt_in is None:
        return batch
    with torch.no_grad():
        logits = model(batch.inputs, batch.tgt_in, src_mask=batch.src_mask)  # (N, T, V)
    own = logits.argmax(-1)[:, :-1]  # (N, T-1): the prediction at t is the input at t + 1
    gold = batch.tgt_in[:, 1:]
    real = batch.targets[:, :-1] != -100  # an input at t + 1 is real when the target at t is (padding stays)
    swap = (torch.rand(gold.shape, device=gold.device) >= p) & real
    mixed = torch.cat([batch.tgt_in[:, :1], torch.where(swap, own, gold)], dim=1)  # (N, T)
    return replace(batch, tgt_in=mixed)
