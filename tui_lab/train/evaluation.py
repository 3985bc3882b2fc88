"""The Trainer's evaluation and samples, kept beside the training step rather than inside it.

A mixin so the methods keep reading `self.model`, `self.source`, ...: it needs the Trainer's `train_config`,
`model`, `source`, `dist`, `device`, `step_count`, `is_seq2seq`, `last_eval` and `_emit`.
"""

from __future__ import annotations

import torch

from tui_lab.train import distributed
from tui_lab.train.events import EvalEvent, SampleEvent
from tui_lab.train.sources import token_loss_sum

EVAL_SEED_OFFSET = 7919  # validation batches come from their own fixed stream: every eval sees the same ones


class EvaluationMixin:
    @torch.no_grad()
    def evaluate(self) -> EvalEvent:
        """Validation loss on fixed held-out batches (split over ranks), and exact match for seq2seq."""
        c = self.train_config
        generator = torch.Generator().manual_seed(c.seed + EVAL_SEED_OFFSET)
        self.model.eval()
        sums = torch.zeros(2)
        for _ in range(c.eval_batches):
            batch = self.source.batch("val", c.batch_size, generator)
            local = batch.rows(*self.dist.shard(c.batch_size)).to(self.device)
            sums[0] += token_loss_sum(self.model, local, 0.0).float().cpu()
            sums[1] += local.count()
        sums = distributed.all_sum(sums.to(self.device), self.dist).cpu()
        exact, extra = None, {}
        if self.is_seq2seq and self.dist.is_main:
            exact = self.source.exact_match(self.model, self.device, c.eval_examples)
        if hasattr(self.source, "metrics") and self.dist.is_main:  # MLM: masked-token accuracy and baselines
            extra = self.source.metrics(self.model, self.device, c.eval_batches, c.batch_size,
                                        c.seed + EVAL_SEED_OFFSET)
        self.model.train()
        self.last_eval = EvalEvent(self.step_count, sums[0].item() / max(1.0, sums[1].item()), exact, **extra)
        self._emit(self.last_eval)
        return self.last_eval

    @torch.no_grad()
    def sample(self) -> SampleEvent | None:
        """A completion (LM) or a greedy translation of a held-out source (seq2seq); rank 0 only."""
        if not self.dist.is_main:
            return None
        self.model.eval()
        prompt, text, target = self.source.sample(self.model, self.device, self.step_count, self.train_config.seed)
        self.model.train()
        event = SampleEvent(self.step_count, text, prompt, target)
        self._emit(event)
        return event
