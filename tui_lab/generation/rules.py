"""The rules a decoding run obeys besides its sampling knobs: what transformers' `generate` calls its logits
processors and stopping criteria (no torch; `processors.py` turns them into transformers' own processors).

A Hugging Face folder's generation_config.json sets them (`tui_lab.hf.generation_config`); a lab model has
none but its eos. Lengths are in transformers' sense: `min_length` and `max_length` count the whole sequence
(a decoder-only prompt, an encoder-decoder's decoder start), `min_new_tokens` only the new tokens.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecodingRules:
    eos_ids: tuple[int, ...] = ()  # any of them ends a row (Llama 3 lists end-of-text and end-of-turn)
    pad_id: int | None = None  # written after a row ends; transformers falls back to the first eos
    min_length: int = 0
    min_new_tokens: int = 0
    repetition_penalty: float = 1.0  # CTRL (Keskar et al. 2019): seen tokens' logits / p if > 0 else * p
    no_repeat_ngram_size: int = 0
    forced_bos_id: int | None = None  # the first new token
    forced_eos_id: int | tuple[int, ...] | None = None  # the last token at the length limit (one of a list)
    bad_words_ids: tuple[tuple[int, ...], ...] = ()  # sequences never completed (one-token ones never chosen)
    length_penalty: float = 1.0  # beam search: a finished hypothesis scores sum(log p) / new_len ** this
    early_stopping: bool | str = False  # beam search: True, False (transformers' heuristic) or "never"
    min_p: float | None = None  # sampling: drop tokens below min_p x the top token's probability (after top-p)
    renormalize: bool = False  # log-softmax again after every processor (opus-mt sets it: beam scores change)

    def __post_init__(self) -> None:
        check_rules(self)

    @property
    def fill_id(self) -> int | None:
        """What a finished row is padded with: pad, else the first eos (transformers' rule)."""
        return self.pad_id if self.pad_id is not None else (self.eos_ids[0] if self.eos_ids else None)

    @property
    def shapes_logits(self) -> bool:
        """True when some rule changes the scores (beyond eos, which only stops)."""
        return bool(self.min_length or self.min_new_tokens or self.repetition_penalty != 1.0
                    or self.no_repeat_ngram_size or self.forced_bos_id is not None
                    or self.forced_eos_id is not None or self.bad_words_ids or self.renormalize)


def check_rules(rules: DecodingRules) -> None:
    """One-line ValueErrors naming the rule, for values transformers refuses too."""
    if rules.repetition_penalty <= 0:
        raise ValueError(f"repetition_penalty ({rules.repetition_penalty}) must be > 0 (1.0 means none)")
    for name in ("min_length", "min_new_tokens", "no_repeat_ngram_size"):
        value = getattr(rules, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} ({value}) must be an integer >= 0")
    if rules.min_p is not None and not 0 <= rules.min_p <= 1:
        raise ValueError(f"min_p ({rules.min_p}) must be in [0, 1]")
    if rules.early_stopping not in (True, False, "never"):
        raise ValueError(f"early_stopping ({rules.early_stopping!r}) must be true, false or \"never\"")
