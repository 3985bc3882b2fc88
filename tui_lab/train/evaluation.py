"""The Trainer's evaluation and samples: an object the Trainer owns, handed the model and the step each time.

It reads the held-out side of the trainer's source and returns events; the Trainer keeps the last evaluation
and sends the events on, so nothing here reaches back into the Trainer.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tui_lab.train import distributed
from tui_lab.train.config import TrainConfig
from tui_lab.train.events import EvalEvent, SampleEvent
from tui_lab.train.sources import token_loss_sum

EVAL_SEED_OFFSET = 7919  # validation batches come from their own fixed stream: every eval sees the same ones


class Evaluator:
    def __init__(self, train_config: TrainConfig, source: Any, dist: distributed.DistInfo, device: str) -> None:
        self.train_config, self.source, self.dist, self.device = train_config, source, dist, device

    @torch.no_grad()
    def evaluate(self, model: nn.Module, step: int) -> EvalEvent:
        """Validation loss on fixed held-out batches (split over ranks), and exact match for seq2seq."""
        c = self.train_config
        generator = torch.Generator().manual_seed(c.seed + EVAL_SEED_OFFSET)
        model.eval()
        sums = torch.zeros(2)
        for _ in range(c.eval_batches):
            batch = self.source.batch("val", c.batch_size, generator)
            local = batch.rows(*self.dist.shard(c.batch_size)).to(self.device)
            sums[0] += token_loss_sum(model, local, 0.0).float().cpu()
            sums[1] += local.count()
        sums = distributed.all_sum(sums.to(self.device), self.dist).cpu()
        exact, extra = None, {}
        if self.source.is_seq2seq and self.dist.is_main:
            exact = self.source.exact_match(model, self.device, c.eval_examples)
        if hasattr(self.source, "metrics") and self.dist.is_main:  # MLM: masked-token accuracy and baselines
            extra = self.source.metrics(model, self.device, c.eval_batches, c.batch_size,
                                        c.seed + EVAL_SEED_OFFSET)
        model.train()
        return EvalEvent(step, sums[0].item() / max(1.0, sums[1].item()), exact, **extra)

    @torch.no_grad()
    def sample(self, model: nn.Module, step: int) -> SampleEvent | None:
        """A completion (LM) or a greedy translation of a held-out source (seq2seq); rank 0 only."""
        if not self.dist.is_main:
            return None
        model.eval()
        prompt, text, target = self.source.sample(model, self.device, step, self.train_config.seed)
        model.train()
        return SampleEvent(step, text, prompt, target)
