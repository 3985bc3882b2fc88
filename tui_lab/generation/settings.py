"""How to continue a prompt, and the one check of those settings (no torch: the app checks its form with it)."""

from __future__ import annotations

import math
from dataclasses import dataclass

SEED_LIMIT = 2**63  # torch's generators take a signed 64-bit seed


@dataclass(frozen=True)
class GenerationSettings:
    """The knobs a person sets; checked when made, so a bad value never reaches the model."""

    max_new_tokens: int = 64
    temperature: float = 1.0  # 0 is greedy
    top_k: int | None = None
    top_p: float | None = None
    beam_size: int = 1  # > 1: beam search (deterministic, the sampling knobs do not apply, unless beam_sample)
    use_cache: bool = True
    seed: int = 0  # seeds sampling
    nat_length: int | None = None  # NAT models: decode exactly this many tokens (overrides the length classifier)
    # With beam_size > 1 and temperature > 0: transformers' beam sample (do_sample with num_beams), the beams'
    # continuations drawn from softmax(temperature, top-k, top-p) rather than ranked (temperature 0: beam search);
    # a folder's generation_config.json sets it
    beam_sample: bool = False

    def __post_init__(self) -> None:
        check_settings(self.max_new_tokens, self.temperature, self.top_k, self.top_p, self.beam_size)
        if self.nat_length is not None and (not isinstance(self.nat_length, int) or self.nat_length < 1):
            raise ValueError(f"nat_length ({self.nat_length}) must be an integer >= 1 (the tokens NAT decodes)")
        if not isinstance(self.seed, int) or not 0 <= self.seed < SEED_LIMIT:
            raise ValueError(f"seed ({self.seed}) must be an integer from 0 to 2**63 - 1")


    @property
    def mode(self) -> str:
        """greedy, sample, beam or beam-sample: transformers' four decoding modes (num_beams x do_sample)."""
        if self.beam_size > 1:
            return "beam-sample" if self.beam_sample and self.temperature > 0 else "beam"
        return "sample" if self.temperature > 0 else "greedy"


def check_settings(max_new_tokens: int, temperature: float, top_k: int | None, top_p: float | None,
                   beam_size: int = 1) -> None:
    """One-line ValueErrors, each starting with the setting's name, for settings no sampler can honour."""
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens ({max_new_tokens}) must be an integer >= 1 (at least one new token)")
    for name, value in (("temperature", temperature), ("top_p", top_p)):
        if isinstance(value, float) and not math.isfinite(value):  # nan passes no bound; inf passes >= 0
            raise ValueError(f"{name} ({value}) must be a finite number")
    if temperature < 0:
        raise ValueError(f"temperature ({temperature}) must be >= 0 (0 means greedy)")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k ({top_k}) must be >= 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p ({top_p}) must be in (0, 1]")
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(f"beam_size ({beam_size}) must be an integer >= 1")
