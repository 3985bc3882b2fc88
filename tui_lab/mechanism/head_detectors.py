"""Which heads do the known jobs: previous-token, duplicate-token and induction scores per head, as TransformerLens's
`detect_head` and the ARENA induction notebook measure them, on any decoder-only model.

The text is T random tokens repeated once (2T tokens, each half drawn without repeats when the vocabulary allows),
so a token's earlier occurrence and the one after it are known positions. Each score is a mean attention weight
(1 = the head always attends there, 0 = never), over the batch's rows:
- previous-token: query i on key i - 1, every query but the first (the diagonal at offset -1);
- duplicate-token: a second-half query i on the same token's first occurrence, key i - T (offset -T);
- induction: a second-half query i on the token after that occurrence, key i - T + 1 (TransformerLens's offset
  diagonal 1 - T, here over the second half's T queries).
Dimension legend: N batch, H heads, L length (2T).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from tui_lab.analysis.head_scores import SCORES
from tui_lab.mechanism.cache import layer_points, require_causal, run_with_cache


@dataclass
class HeadScores:
    """scores[name][l][h] for name in SCORES, measured on `batch` rows of `seq_len` random tokens repeated."""

    seq_len: int
    batch: int
    seed: int
    scores: dict[str, list[list[float]]]

    def to_dict(self) -> dict[str, Any]:
        layers = len(self.scores["previous"])
        heads = len(self.scores["previous"][0]) if layers else 0
        per_head = [
            {"layer": layer, "head": h, **{name: self.scores[name][layer][h] for name in SCORES}}
            for layer in range(layers)
            for h in range(heads)
        ]
        return {"seq_len": self.seq_len, "batch": self.batch, "token_seed": self.seed, **self.scores, "heads": per_head}


def repeated_tokens(vocab: int, seq_len: int, batch: int, seed: int = 0) -> Tensor:
    """(N, 2T): each row T random tokens (no repeat within them when vocab >= T), then the same T again."""
    gen = torch.Generator().manual_seed(seed)
    if vocab >= seq_len:
        rows = [torch.randperm(vocab, generator=gen)[:seq_len] for _ in range(batch)]
        first = torch.stack(rows)
    else:
        first = torch.randint(0, vocab, (batch, seq_len), generator=gen)
    return torch.cat([first, first], dim=1)


def stripe_scores(pattern: Tensor, seq_len: int) -> dict[str, Tensor]:
    """pattern (N, H, 2T, 2T) -> {score: (H,)}: the mean weight on each job's diagonal (see the module)."""
    t = seq_len
    previous = pattern.diagonal(offset=-1, dim1=-2, dim2=-1)  # (N, H, 2T - 1): queries 1..2T-1
    duplicate = pattern.diagonal(offset=-t, dim1=-2, dim2=-1)  # (N, H, T): queries T..2T-1
    induction = pattern.diagonal(offset=1 - t, dim1=-2, dim2=-1)[..., 1:]  # queries T..2T-1
    return {
        "previous": previous.mean(dim=(0, 2)),
        "duplicate": duplicate.mean(dim=(0, 2)),
        "induction": induction.mean(dim=(0, 2)),
    }


@torch.no_grad()
def head_scores(model, seq_len: int = 50, batch: int = 8, seed: int = 0,
                on_step: Callable[[int, int], None] | None = None) -> HeadScores:
    """Every head's previous-token, duplicate-token and induction score on `batch` rows of `seq_len` random
    tokens repeated (2 * seq_len tokens in all, which must fit a model with learned positions). `on_step(done,
    total)` after each row's pass (then one row a pass); it may raise to stop between rows."""
    config = model.config
    require_causal(config, "heads")
    if seq_len < 2 or batch < 1:
        raise ValueError(f"seq-len must be at least 2 and batch at least 1 (got {seq_len} and {batch})")
    if config.positions == "learned" and 2 * seq_len > config.max_len:
        raise ValueError(
            f"seq-len: {seq_len} tokens repeated are {2 * seq_len}, past this model's window of "
            f"{config.max_len}; use --seq-len {config.max_len // 2} or less"
        )
    ids = repeated_tokens(config.vocab, seq_len, batch, seed).to(next(model.parameters()).device)
    points = layer_points(config, "attn.hook_pattern")
    # One pass per row when a caller shows progress: every row has 2T tokens, so the mean of the rows' means is
    # the batch's mean, and the same random rows are drawn either way.
    chunks = ids.split(1) if on_step is not None else (ids,)
    sums: list[dict[str, Tensor]] = []
    for done, chunk in enumerate(chunks, 1):
        _, cache = run_with_cache(model, chunk, names=points)
        per_layer = [stripe_scores(cache[p].float(), seq_len) for p in points]
        if sums:
            per_layer = [{k: s[k] + p[k] for k in SCORES} for s, p in zip(sums, per_layer, strict=True)]
        sums = per_layer
        if on_step is not None:
            on_step(done, len(chunks))
    scores = {name: [(layer[name] / len(chunks)).tolist() for layer in sums] for name in SCORES}
    return HeadScores(seq_len, batch, seed, scores)


def default_seq_len(config) -> int:
    """50 random tokens, or half the window of a model with learned positions when that is less."""
    return min(50, config.max_len // 2) if config.positions == "learned" else 50
