"""`reverse-long`: the lab's reverse task with 12..20 words instead of 3..10 (scheduled-sampling's task).

A decoder that only ever saw gold prefixes (teacher forcing) has many steps in which to drift on its own
outputs at inference: where exposure bias (seed 002 section 4, Tips 4) should show.
"""

from __future__ import annotations

import random

LONG_RANGE = (12, 20)


def long_reverse_task(seed: int = 0, train_size: int = 10_000, val_size: int = 300):
    from tui_lab.data.tasks import SYMBOLS, Seq2SeqTask
    from tui_lab.data.tokenizers import word_tokenizer

    rng = random.Random(f"reverse-long:{seed}")

    def draw() -> tuple[str, ...]:
        return tuple(rng.choices(SYMBOLS, k=rng.randint(*LONG_RANGE)))

    val = list(dict.fromkeys(draw() for _ in range(val_size)))
    held = set(val)
    train = [s for s in (draw() for _ in range(train_size)) if s not in held]
    tokenizer = word_tokenizer(list(SYMBOLS))
    vocab = tokenizer.hf.get_vocab()

    def pair(seq: tuple[str, ...]) -> tuple[list[int], list[int]]:
        return [vocab[w] for w in seq], [vocab[w] for w in reversed(seq)]

    return Seq2SeqTask("reverse-long", tokenizer, [pair(s) for s in train], [pair(s) for s in val])
