"""The alignment measures of guided-attention: how diagonal a model's cross-attention is, and one example's grid.

The grid is the last decoder layer's cross-attention, mean of heads (what the Train view draws), in eval mode
(monotonic's is then its hard attention). Dimension legend: N batch, T target, S source.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.result import Grid

# One held-out-shaped example per task: copy's diagonal, numbers-de's units-before-tens swap.
EXAMPLES = {"copy": ("alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta"),
            "reverse": ("alpha beta gamma delta epsilon zeta", "zeta epsilon delta gamma beta alpha"),
            "numbers-de": ("three hundred forty seven", "drei hundert sieben und vierzig")}


def last_cross(model, src, src_mask, tgt_in):
    """The last decoder layer's cross-attention, mean of heads: (N, T, S)."""
    import torch

    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.run(src, tgt_in, src_mask=src_mask, need_weights=True)
    model.train(was_training)
    return [a for a in out.attentions if a.kind == "cross"][-1].weights.mean(1)


def agreement(model, batch) -> float:
    """The share of the batch's real target words whose most-attended source word is the diagonal's."""
    from tui_lab.train.guided_attention import diagonal_agreement
    from tui_lab.train.sources import IGNORE_INDEX

    grid = last_cross(model, batch.inputs, batch.src_mask, batch.tgt_in)
    return diagonal_agreement(grid, batch.targets != IGNORE_INDEX, batch.src_mask)


def example_grid(model, task, name: str) -> Grid:
    """The task's example as a heatmap: rows target words, columns source words (the EOS row left out)."""
    import torch

    source, target = EXAMPLES[name]
    tok = task.tokenizer
    src_ids, tgt_ids = tok.encode(source), tok.encode(target)
    grid = last_cross(model, torch.tensor([src_ids]), None, torch.tensor([[tok.bos_id, *tgt_ids]]))
    values: list[list[Any]] = [[round(w, 3) for w in row] for row in grid[0, :len(tgt_ids)].tolist()]  # (T, S)
    return Grid(f"{name}: last layer's cross-attention, mean of heads", values, target.split(), source.split(),
                axes=("target", "source"))
