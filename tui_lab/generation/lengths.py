"""How many tokens fit a model's position window, and how many steps of a run slid past it (no torch).

Learned positions have no row past `max_len`, so a decoder-only run whose sequence outgrows `max_len`
recomputes the last `max_len` tokens at every step without the cache (`decoder_state.DecoderState`): a
speed comparison that slides measures the window, not the cache. The benchmark's and the Speed view's
default lengths therefore fit the window; a length asked for explicitly may still slide, and says so.
"""

from __future__ import annotations

from typing import Any

BASE_LENGTHS = (64, 128, 256)


def position_window(config: Any) -> int | None:
    """How many tokens the decoder may see at once: max_len for learned positions, unlimited otherwise."""
    return config.max_len if config.positions == "learned" else None


def start_length(config: Any, prompt_len: int) -> int:
    """What the decoder is first fed: the prompt (decoder-only) or bos alone (an encoder-decoder's target)."""
    return prompt_len if config.family == "decoder-only" else 1


def slid_steps(config: Any, prompt_len: int, new_tokens: int) -> int:
    """How many of the `new_tokens` steps see more than the window (the last token is never fed back)."""
    window = position_window(config)
    if window is None:
        return 0
    return max(0, min(new_tokens, start_length(config, prompt_len) + new_tokens - 1 - window))


def longest_fitting(config: Any, prompt_len: int) -> int | None:
    """The most new tokens that never slide (None: no limit)."""
    window = position_window(config)
    return None if window is None else window - start_length(config, prompt_len) + 1


def default_lengths(config: Any, prompt_len: int = 16, longest: int = BASE_LENGTHS[-1]) -> tuple[int, ...]:
    """Three lengths up to `longest` (longest/4, /2, 1x) that fit the model's window after the prompt.

    gpt2-toy (max_len 256) with a 16-token prompt: (64, 128, 240); sinusoidal positions: (64, 128, 256).
    """
    fit = longest_fitting(config, prompt_len)
    if fit is not None and fit < 1:
        raise ValueError(f"prompt_len ({prompt_len}) must be below max_len ({config.max_len}) to leave room "
                         f"for new tokens")
    top = longest if fit is None else min(longest, fit - fit % 16 if fit >= 16 else fit)
    wanted = (max(1, longest // 4), max(1, longest // 2), longest)
    lengths = sorted({min(n, top) for n in wanted})
    if len(lengths) < 3:
        lengths = sorted({max(1, top // 4), max(1, top // 2), top})
    return tuple(lengths)


def slide_note(config: Any, prompt_len: int, new_tokens: int) -> str | None:
    """One plain sentence when a run slides, else None."""
    steps = slid_steps(config, prompt_len, new_tokens)
    if not steps:
        return None
    return (f"{new_tokens} new tokens after a {prompt_len}-token prompt pass max_len {config.max_len}: the last "
            f"{steps} steps recomputed the window without the cache (at most {longest_fitting(config, prompt_len)} "
            f"fit)")
