"""order-blindness: attention alone cannot tell word order apart; positions (or a causal mask) can.

Seed 003: "attention itself does not tell order apart: shuffle the words and each word's result is
unchanged"; seed 002: "I like you" vs "you like me". An encoder (no mask) is run on a sentence and on a
shuffled copy, once with `positions = none` and once with a position scheme; the shuffled outputs are put
back in the sentence's order and compared token by token. Without positions every block is permutation-
equivariant (attention sums over keys, the FFN and norms act per token), so the differences are float
rounding only; with positions they are not. A causal decoder without positions is measured too: its mask
alone breaks the symmetry, since token i sees only the tokens before it.
"""

from __future__ import annotations

import random
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, check
from tui_lab.experiments.result import Grid, Result, Table


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    import torch

    from tui_lab.data.tokenizers import word_tokenizer

    words = options["sentence"].split()
    order = shuffled_order(len(words), options["seed"])
    tokenizer = word_tokenizer(words)
    ids = torch.tensor([[tokenizer.encode(w)[0] for w in words]])  # (1, L)
    base = encoder_config(options, tokenizer.vocab_size)
    with_positions = base.positions if options["positions"] == "preset" else options["positions"]
    if with_positions == "none":
        raise ValueError("positions: pick a scheme to compare with 'none' (sinusoidal, learned, rope, alibi)")
    runs = {"no positions": base.replace(positions="none"), f"{with_positions} positions":
            base.replace(positions=with_positions),
            "causal, no positions": base.replace(positions="none", family="decoder-only", encoder_layers=0,
                                                 decoder_layers=base.encoder_layers)}
    diffs = {}
    for i, (label, config) in enumerate(runs.items()):
        check(cancel, "order-blindness")
        progress(i / len(runs), f"encoding with {label}")
        diffs[label] = token_differences(config, ids, order, options["seed"])
    return _result(options, words, order, diffs, with_positions)


def shuffled_order(n: int, seed: int) -> list[int]:
    """A seeded permutation of range(n) that moves at least one word (n >= 2)."""
    rng = random.Random(seed)
    order = list(range(n))
    while order == sorted(order):
        rng.shuffle(order)
    return order


def encoder_config(options: dict[str, Any], vocab: int):
    """The preset's sizes as an encoder (no mask), dropout off, vocab fitted to the sentence's words."""
    from tui_lab.presets import load_preset

    preset = load_preset(options["preset"])
    layers = max(preset.encoder_layers, preset.decoder_layers)
    return preset.replace(family="encoder-only", encoder_layers=layers, decoder_layers=0, vocab=vocab,
                          dropout=0.0, max_len=max(preset.max_len, 64))


def token_differences(config, ids, order: list[int], seed: int) -> list[float]:
    """Per token: max |out(sentence)[t] - out(shuffled)[where t went]| over the features."""
    import torch

    from tui_lab.loading import load_model

    model = load_model("config", config, seed=seed).model
    shuffled = ids[:, order]  # position i holds word order[i]
    with torch.no_grad():
        run = model.encode if config.family == "encoder-only" else _decoder_states(model)
        out, out_shuffled = run(ids)[0], run(shuffled)[0]  # (L, E)
    back = torch.empty_like(out_shuffled)
    back[torch.tensor(order)] = out_shuffled  # word order[i]'s output goes back to position order[i]
    return (out - back).abs().amax(dim=-1).tolist()


def _decoder_states(model):
    """A decoder-only model's last hidden states (before the head), the decoder's counterpart of encode."""
    def run(ids):
        x = model.embed(ids)
        for block in model.decoder:
            x = block(x)
        return x
    return run


def _result(options, words, order, diffs: dict[str, list[float]], with_positions: str) -> Result:
    result = Result("order-blindness", options)
    labels = list(diffs)
    without, with_, causal = (max(diffs[label]) for label in labels)
    result.scalars = {"without_positions_max_diff": without, "with_positions_max_diff": with_,
                      "causal_without_positions_max_diff": causal, "with_positions": with_positions,
                      "tokens": len(words)}
    result.notes = [f"sentence: {' '.join(words)}", f"shuffled: {' '.join(words[i] for i in order)}",
                    f"without positions every token's output is the same after un-shuffling (max difference "
                    f"{without:.1e}: float rounding); with {with_positions} positions it moves by up to {with_:.3f}; "
                    f"a causal decoder without positions moves by up to {causal:.3f}: its mask tells order apart"]
    where = {w: i for i, w in enumerate(order)}
    table = Table("per token: max |difference| over the features after un-shuffling",
                  ["token", "position", "shuffled to", *labels])
    for t, word in enumerate(words):
        table.rows.append([word, t, where[t], *(round(diffs[label][t], 8) for label in labels)])
    result.tables["tokens"] = table
    result.grids["differences"] = Grid("max |difference| per token", [diffs[label] for label in labels], labels,
                                       words, axes=("model", "token"))
    return result


EXPERIMENT = Experiment(
    name="order-blindness",
    title="Attention is blind to word order",
    lesson="Seed 003: attention itself does not tell order apart: shuffle the words and each word's result is "
           "unchanged. Seed 002: 'I like you' vs 'you like me'.",
    options={"sentence": "I like you because you like me", "preset": "transformer-2017-toy",
             "positions": "preset", "seed": 0},
    quick={},
    runner=run,
    help={"sentence": "words separated by spaces (two or more)", "preset": "the sizes the encoder is built with",
          "positions": "the scheme compared with none: preset (the preset's own), sinusoidal, learned, rope, alibi",
          "seed": "the random weights and the shuffle"},
    check_options=lambda o: _check(o),
)


def _check(options: dict[str, Any]) -> None:
    from tui_lab.config import CHOICES

    if len(options["sentence"].split()) < 2:
        raise ValueError(f"sentence ({options['sentence']!r}) must have two or more words to shuffle")
    allowed = ("preset", *CHOICES["positions"])
    if options["positions"] not in allowed:
        raise ValueError(f"positions ({options['positions']!r}) must be one of: {', '.join(allowed)}")
