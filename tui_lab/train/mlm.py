"""Masked language modelling (Devlin et al. 2019, section 3.1): BERT's objective, on the lab's text.

15% of the positions of each window are chosen; of those, 80% become the mask token, 10% a random token and
10% stay as they are, and the loss is the cross-entropy on the chosen positions only. The mask token is one
special token added to the run's tokenizer (`<mask>`), so a checkpoint's tokenizer carries it.

What "good" means is measured against two baselines that know nothing of context, from the training text's
token counts: always answering the most frequent token, and answering with a token drawn from the unigram
distribution. Dimension legend: N batch, L length, V vocab.
"""

from __future__ import annotations

from collections import Counter

import torch
from torch import Tensor

from tui_lab.data.masking import MASK, mask_id, with_mask_token
from tui_lab.train.sources import IGNORE_INDEX, Batch, LMSource

__all__ = ["MLMSource", "mask_tokens", "unigram_baselines", "with_mask_token"]

MASK_RATE, AS_MASK, AS_RANDOM = 0.15, 0.8, 0.1  # BERT's 15%, then 80 / 10 / 10


def mask_tokens(ids: Tensor, mask: int, vocab: int, generator: torch.Generator,
                protected: frozenset[int] = frozenset()) -> tuple[Tensor, Tensor]:
    """(N, L) ids -> (inputs, targets): targets hold the original id where chosen, IGNORE_INDEX elsewhere.

    At least one position per row is chosen, so a short window always has something to predict.
    """
    n, length = ids.shape
    chosen = torch.rand(n, length, generator=generator) < MASK_RATE  # (N, L)
    chosen[torch.arange(n), torch.randint(length, (n,), generator=generator)] = True
    for special in protected:
        chosen &= ids != special
    roll = torch.rand(n, length, generator=generator)
    random_ids = torch.randint(vocab, (n, length), generator=generator)
    inputs = torch.where(chosen & (roll < AS_MASK), mask, ids)
    inputs = torch.where(chosen & (roll >= AS_MASK) & (roll < AS_MASK + AS_RANDOM), random_ids, inputs)
    return inputs, torch.where(chosen, ids, IGNORE_INDEX)


def unigram_baselines(train: Tensor, val: Tensor) -> tuple[float, float]:
    """Expected accuracy on val tokens of (most frequent train token, a draw from the train unigram)."""
    train_counts, val_counts = Counter(train.tolist()), Counter(val.tolist())
    top = train_counts.most_common(1)[0][0]
    total_train, total_val = sum(train_counts.values()), sum(val_counts.values())
    unigram = sum(count / total_train * val_counts.get(t, 0) / total_val for t, count in train_counts.items())
    return val_counts.get(top, 0) / total_val, unigram


class MLMSource(LMSource):
    """Windows of the corpus with BERT's masking; evaluation adds masked-token accuracy and the baselines."""

    family = "encoder-only"
    objective = "masked language modelling"

    def __init__(self, data, seq_len: int) -> None:
        super().__init__(data, seq_len)
        self.mask_id = mask_id(self.tokenizer)
        if self.mask_id is None:
            raise ValueError(f"tokenizer: masked language modelling needs a {MASK} token")
        self.baselines = unigram_baselines(data.train, data.val)

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> Batch:
        x, _ = self.data.batch(split, batch_size, self.seq_len, generator)  # (N, L); the shift is unused
        inputs, targets = mask_tokens(x, self.mask_id, self.tokenizer.vocab_size, generator)
        return Batch(inputs, targets)

    @torch.no_grad()
    def metrics(self, model, device, batches: int, batch_size: int, seed: int) -> dict[str, float]:
        """Masked-token accuracy on fixed held-out batches, beside the two context-free baselines."""
        generator = torch.Generator().manual_seed(seed)
        hits = count = 0
        for _ in range(batches):
            b = self.batch("val", batch_size, generator).to(device)
            chosen = b.targets != IGNORE_INDEX
            hits += int((model(b.inputs).argmax(-1) == b.targets)[chosen].sum())
            count += int(chosen.sum())
        most_frequent, unigram = self.baselines
        return {"masked_accuracy": hits / max(1, count), "baseline_accuracy": most_frequent,
                "unigram_accuracy": unigram}

    def sample(self, model, device, step: int, seed: int, new_tokens: int = 0) -> tuple[str, str, str | None]:
        """One held-out window with some tokens masked: (the masked text, the model's fill, the original)."""
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        window = self.data.val[: min(self.seq_len, 64)][None, :]  # (1, L)
        inputs, targets = mask_tokens(window, self.mask_id, self.tokenizer.vocab_size, generator)
        inputs = torch.where(targets != IGNORE_INDEX, self.mask_id, window)  # show every chosen one as a mask
        guess = model(inputs.to(device)).argmax(-1).cpu()
        filled = torch.where(targets != IGNORE_INDEX, guess, window)
        shown = self.tokenizer.hf.decode(inputs[0].tolist(), skip_special_tokens=False)  # masks stay visible
        return shown, self.tokenizer.decode(filled[0].tolist()), self.tokenizer.decode(window[0].tolist())
