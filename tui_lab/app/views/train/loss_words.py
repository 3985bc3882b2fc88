"""What the Train view's losses include, and a sample said so that each part reads as what it is.

The train loss is the cross-entropy the optimizer minimises: with label smoothing it can never reach 0 (its
floor is the entropy of the smoothed target, `smoothing_floor`), and dropout is on. The val loss is the plain
cross-entropy on held-out batches in eval mode (tui_lab/train/evaluation.py: smoothing 0, no dropout), so a
smoothed run shows train 0.74 against val 0.09 with nothing wrong: the note says why, with the floor computed.
"""

from __future__ import annotations

import math


def smoothing_floor(smoothing: float, vocab: int) -> float:
    """The least cross-entropy against targets smoothed as torch does ((1 - e) one-hot + e / V uniform): the
    entropy of that target, reached when the model predicts it exactly."""
    if smoothing <= 0 or vocab < 2:
        return 0.0
    hit, miss = 1 - smoothing + smoothing / vocab, smoothing / vocab
    return -hit * math.log(hit) - (vocab - 1) * miss * math.log(miss)


def loss_note(smoothing: float, dropout: float, vocab: int) -> str:
    """The note above the loss plot: what the train curve includes that the val curve does not."""
    extras = []
    if smoothing > 0:
        extras.append(f"label smoothing {smoothing:g} (floor {smoothing_floor(smoothing, vocab):.2f})")
    if dropout > 0:
        extras.append(f"dropout {dropout:g}")
    if not extras:
        return "train loss: cross-entropy on each batch; val loss: the same on held-out batches"
    return f"train loss includes {', '.join(extras)}; val loss: neither"


def sample_text(step: int, prompt: str, text: str, target: str | None) -> str:
    """A training sample, one labelled row per part, each quoted (a reference 'null' is the German word,
    not a missing value); a translation says whether it matches its reference."""
    if target is None:
        return f"step {step}\n  prompt     {prompt!r}\n  continues  {text!r}"
    verdict = "matches" if text.strip() == target.strip() else "differs"
    return (f"step {step}\n  source     {prompt!r}\n  model      {text!r}\n  reference  {target!r}"
            f"  ({verdict})")
