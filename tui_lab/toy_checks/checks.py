"""Text checks for a trained language model's greedy output: real words, and no loop.

`known_word_share`: the share of generated words that the training text also contains (a model that
spells by bytes or BPE pieces can invent non-words; a good toy should not). `repeated_ngram_share`: the
share of word n-grams that already occurred earlier in the same output. Greedy decoding that has fallen
into a loop repeats its cycle, so once the cycle is shorter than the output nearly every n-gram is a
repeat; prose that merely reuses a phrase now and then scores low.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased words, punctuation and digits dropped ("Mrs." -> "mrs")."""
    return [w.lower() for w in _WORD.findall(text)]


def known_word_share(text: str, vocabulary: set[str]) -> float:
    """Share of the words of `text` found in `vocabulary` (1.0 for text without words)."""
    found = words(text)
    return sum(w in vocabulary for w in found) / len(found) if found else 1.0


def repeated_ngram_share(text: str, n: int = 6) -> float:
    """Share of the word n-grams of `text` that occurred earlier in it (0.0 when there are none)."""
    found = words(text)
    grams = [tuple(found[i:i + n]) for i in range(len(found) - n + 1)]
    seen: set[tuple[str, ...]] = set()
    repeats = 0
    for gram in grams:
        repeats += gram in seen
        seen.add(gram)
    return repeats / len(grams) if grams else 0.0


def most_repeated_ngram(text: str, n: int = 8) -> int:
    """How often the commonest word n-gram of `text` occurs: 3 or more in a short output is a loop."""
    found = words(text)
    grams = Counter(tuple(found[i:i + n]) for i in range(len(found) - n + 1))
    return max(grams.values(), default=0)


# Prompts the tests and benchmarks/tools/make_shipped_toys.py continue greedily: an opening, a question, a chapter.
PROMPTS = ("In the morning, Anna walked to", '"Have you seen the map?" asked Tom.', "Chapter 3\n\n",
           "Late in the evening, the captain")


def greedy_text(model, tokenizer, prompt: str, new_tokens: int = 80) -> str:
    """The prompt's greedy (temperature 0) continuation, decoded, without the prompt."""
    import torch

    from tui_lab.generation import generate

    ids = torch.tensor([tokenizer.encode(prompt)])  # (1, P)
    out = generate(model, ids, new_tokens, temperature=0.0, eos_id=tokenizer.eos_id, vocab_limit=tokenizer.vocab_size)
    return tokenizer.decode(out[0, ids.shape[1]:].tolist())
