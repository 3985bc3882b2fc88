"""What a person watching a run wants beyond its events: the lr curve, tokens per step, an alignment grid.

Computed where the Trainer lives (a thread or a trainer process, tui_lab/train/process.py) and sent as
plain data, so whoever draws them never touches the weights being trained.
"""

from __future__ import annotations

from typing import Any

LR_CURVE_POINTS = 200


def lr_curve(trainer: Any, points: int = LR_CURVE_POINTS) -> list[tuple[int, float]]:
    """The schedule's learning rate at up to `points` steps of the run."""
    from tui_lab.train.schedules import learning_rate

    c, total = trainer.train_config, trainer.train_config.steps
    every = max(1, total // points)
    return [(s, learning_rate(s, c, trainer.model_config.d_model)) for s in range(0, total, every)]


def tokens_per_step(trainer: Any) -> int:
    """Tokens one step trains on: batch x window for text; batch x the mean (source + target + 1) for a task."""
    c = trainer.train_config
    if not trainer.is_seq2seq:
        return c.batch_size * trainer.source.context()
    pairs = trainer.source.task.train
    mean = sum(len(src) + len(tgt) + 1 for src, tgt in pairs) / max(1, len(pairs))
    return max(1, round(c.batch_size * mean))


def alignment_example(trainer: Any) -> tuple[list[int], list[int]] | None:
    """The held-out pair whose cross-attention is worth watching; None for a language model.

    The longest source: for numbers-de a three-digit number, where German reorders the units before the
    tens, so the forming alignment is worth watching (a one-word one is not)."""
    if not trainer.is_seq2seq:
        return None
    return max(trainer.source.task.val, key=lambda pair: len(pair[0]))


def cross_attention(trainer: Any, example: tuple[list[int], list[int]]) -> tuple[list[list[float]], list, list]:
    """Teacher-forced cross-attention of one (src, tgt) pair: rows the predicted target tokens, cols the source."""
    import torch

    model, tok = trainer.model, trainer.tokenizer
    src_ids, tgt_ids = example
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)  # (1, S)
    tgt_in = torch.tensor([[tok.bos_id, *tgt_ids]], device=device)  # (1, T)
    was_training = model.training
    model.eval()  # no dropout, and no draw from the trainer's RNG
    try:
        with torch.no_grad():
            out = model.run(src, tgt_in, need_weights=True)
    finally:
        model.train(was_training)
    cross = [a for a in out.attentions if a.kind == "cross"]
    grid = cross[-1].weights[0].float().mean(0).cpu().tolist()  # (T, S), mean of heads
    rows = tok.token_strings([*tgt_ids, tok.eos_id])
    return grid, rows, tok.token_strings(src_ids)
