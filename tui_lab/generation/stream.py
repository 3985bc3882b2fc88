"""Autoregressive generation one token at a time: the step the app streams, and the loop behind it.

Decoder-only: the input is the prompt and the sequence grows from it. Encoder-decoder: the input is the
source, encoded once; the sequence is the target, starting from `bos_id`, and the cache keeps the
cross-attention keys and values. Rows that emit `eos_id` are finished and padded with eos from then on.

Dimension legend: N batch (rows), P prefix (prompt or bos), L sequence so far, S source, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import Tensor

from tui_lab.generation.decoder_state import DecoderState, position_window
from tui_lab.generation.sampling import chosen_probs, next_tokens
from tui_lab.generation.settings import check_settings
from tui_lab.model import AttentionCapture, Transformer


@dataclass(frozen=True)
class GenerationStep:
    """One new token per row, as it comes."""

    index: int  # 0 for the first new token
    ids: Tensor  # (N,) the new token of each row
    probs: Tensor | None  # (N,) the model's probability of it, at the temperature used, before top-k/top-p
    finished: Tensor  # (N,) bool: the row has emitted eos (at this step or before)
    slid: bool  # the decoder saw only the last max_len tokens (learned positions)
    cropped: bool  # the prompt alone was longer than max_len, so only its last max_len tokens were seen
    attentions: list[AttentionCapture] | None = None  # per layer and kind, weights (N, H, 1, context)


@dataclass(frozen=True)
class Sampler:
    """How each next token is chosen; temperature 0 is greedy."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    generator: torch.Generator | None = None

    def choose(self, logits: Tensor) -> Tensor:  # (N, V) -> (N,)
        return next_tokens(logits, self.temperature, self.top_k, self.top_p, self.generator)


def check_input(model: Transformer, input_ids: Tensor, bos_id: int | None) -> None:
    """One-line ValueErrors for an input this model cannot generate from."""
    family, vocab = model.config.family, model.config.vocab
    if family == "encoder-only":
        raise ValueError("family 'encoder-only' cannot generate: it has no decoder")
    if input_ids.dim() != 2 or input_ids.shape[1] == 0 or input_ids.dtype != torch.long:
        shape = tuple(input_ids.shape)
        raise ValueError(f"input_ids must be a (batch, length) long tensor with length >= 1, got {shape}")
    if int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab:
        raise ValueError(f"input_ids must lie in 0..{vocab - 1} (the model's vocab)")
    if family == "encoder-decoder" and (bos_id is None or not 0 <= bos_id < vocab):
        raise ValueError(f"bos_id ({bos_id}) must be a token id in 0..{vocab - 1} for an encoder-decoder")


def prepare(model: Transformer, input_ids: Tensor, bos_id: int | None, src_mask: Tensor | None,
            rows_per_input: int = 1) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """Return (prefix (N*r, P), memory (N*r, S, E) or None, src_mask or None), each input repeated r times."""
    check_input(model, input_ids, bos_id)
    if model.config.family == "decoder-only":
        return input_ids.repeat_interleave(rows_per_input, dim=0), None, None
    memory = model.encode(input_ids, src_mask)  # (N, S, E), once for the whole generation
    prefix = torch.full((input_ids.shape[0] * rows_per_input, 1), bos_id, dtype=torch.long, device=input_ids.device)
    if rows_per_input > 1:
        memory = memory.repeat_interleave(rows_per_input, dim=0)
        src_mask = src_mask.repeat_interleave(rows_per_input, dim=0) if src_mask is not None else None
    return prefix, memory, src_mask


class Generation:
    """One run: the preallocated sequence buffer, the decoder state and which rows are finished."""

    def __init__(self, model: Transformer, input_ids: Tensor, max_new_tokens: int, sampler: Sampler,
                 use_cache: bool = True, eos_id: int | None = None, bos_id: int | None = None,
                 src_mask: Tensor | None = None) -> None:
        check_settings(max_new_tokens, sampler.temperature, sampler.top_k, sampler.top_p)
        self.model, self.sampler, self.eos_id = model, sampler, eos_id
        prefix, memory, src_mask = prepare(model, input_ids, bos_id, src_mask)
        rows, self.prefix_len = prefix.shape
        self.buffer = torch.empty(rows, self.prefix_len + max_new_tokens, dtype=torch.long, device=prefix.device)
        self.buffer[:, : self.prefix_len] = prefix
        self.length = self.prefix_len
        self.max_new_tokens = max_new_tokens
        window = position_window(model)
        self.cropped = window is not None and self.prefix_len > window
        # The last new token is never fed back, so the cache needs one slot fewer than the final length.
        self.state = DecoderState(model, rows, self.prefix_len + max_new_tokens - 1, use_cache, memory, src_mask)
        self.finished = torch.zeros(rows, dtype=torch.bool, device=prefix.device)

    @property
    def sequence(self) -> Tensor:
        """(N, P + new so far): the prompt (or bos) and every token generated."""
        return self.buffer[:, : self.length]

    def steps(self, want_probs: bool = True, need_attention: bool = False) -> Iterator[GenerationStep]:
        """Generate, yielding after each new token; stops at the limit or when every row is finished."""
        for index in range(self.max_new_tokens):
            logits, attentions = self.state.logits(self.sequence, need_attention)  # (N, V)
            tokens = self.sampler.choose(logits)  # (N,)
            if self.eos_id is not None:
                tokens = tokens.masked_fill(self.finished, self.eos_id)  # finished rows pad with eos
                self.finished = self.finished | (tokens == self.eos_id)
            self.buffer[:, self.length] = tokens
            self.length += 1
            probs = chosen_probs(logits, tokens, self.sampler.temperature) if want_probs else None
            yield GenerationStep(index, tokens, probs, self.finished, self.state.slid, self.cropped, attentions)
            if self.eos_id is not None and bool(self.finished.all()):
                return


def stream(model: Transformer, input_ids: Tensor, max_new_tokens: int, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, eos_id: int | None = None,
           bos_id: int | None = None, generator: torch.Generator | None = None, src_mask: Tensor | None = None,
           need_attention: bool = False) -> Iterator[GenerationStep]:
    """Yield one `GenerationStep` per new token (see `generate` for the arguments).

    With `need_attention`, each step carries the attention row of the query that predicted the token,
    computed on the manual attention path for that one position: weights (N, H, 1, context).
    """
    sampler = Sampler(temperature, top_k, top_p, generator)
    check_settings(max_new_tokens, temperature, top_k, top_p)
    check_input(model, input_ids, bos_id)

    def steps() -> Iterator[GenerationStep]:
        run = Generation(model, input_ids, max_new_tokens, sampler, use_cache, eos_id, bos_id, src_mask)
        return run.steps(want_probs=True, need_attention=need_attention)

    return evaluating(model, steps)


@contextmanager
def eval_mode(model: Transformer) -> Iterator[None]:
    """Dropout off while generating; the model's previous mode comes back afterwards."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


@torch.inference_mode()
def evaluating(model: Transformer, start: Callable[[], Iterator[GenerationStep]]) -> Iterator[GenerationStep]:
    """Run `start()`'s steps in eval mode without autograd.

    torch's decorator re-enters inference mode around each `next()`, so the mode does not leak to the
    caller between steps; eval mode stays on until the steps are exhausted or the iterator is closed.
    """
    with eval_mode(model):
        yield from start()
