"""Autoregressive generation one token at a time: `generate` returns the ids, `stream` yields each step.

Decoder-only: the input is the prompt and the sequence grows from it. Encoder-decoder: the input is the
source, encoded once; the sequence is the target, starting from `bos_id`, and the cache keeps the
cross-attention keys and values. Rows that emit `eos_id` are finished and padded with eos from then on.
A Hugging Face folder's `rules` (`generation.rules`) bring an eos list (any id finishes a row, padded with pad)
and transformers' logits processors, applied to the scores before each choice.

Dimension legend: N batch (rows), P prefix (prompt or bos), L sequence so far, S source, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from tui_lab.config import is_nat
from tui_lab.generation.beam import beam_search
from tui_lab.generation.decoder_state import (
    DecoderState,
    check_input,
    copy_ids,
    position_window,
    prepare,
    stop_ids,
)
from tui_lab.generation.nat import check_nat, nat_steps
from tui_lab.generation.rules import DecodingRules
from tui_lab.generation.sampling import chosen_probs, filter_logits, multinomial, next_tokens
from tui_lab.generation.settings import check_settings
from tui_lab.generation.threads import DecodePlan, torch_threads
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
    # With need_candidates=k: the k likeliest tokens of the distribution drawn from, best first: (ids, probs), (N, k)
    candidates: tuple[Tensor, Tensor] | None = None
    passes: int = 0  # decoder forward passes so far: AT one per new token, NAT 1 for the whole completion
    begins: Tensor | None = None  # NAT: (N,) the positions (BEGINs) each row decoded; None for AT
    predicted_length: Tensor | None = None  # NAT length classifier: (N,) its length, even when overridden
    p_gen: Tensor | None = None  # (N,) copy models: the weight of generating (vs copying) at this step


@dataclass(frozen=True)
class Sampler:
    """How each next token is chosen; temperature 0 is greedy.

    With a `chain` (a Hugging Face folder's rules as transformers' processors, `processors.ScoreChain`, which
    then holds the temperature and top-k/top-p warpers too), scores are the chain's output: greedy takes
    their argmax, sampling draws from their softmax, as transformers' `generate` does."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    generator: torch.Generator | None = None
    chain: Callable[[Tensor, Tensor], Tensor] | None = None

    def choose(self, logits: Tensor, seq: Tensor | None = None) -> Tensor:  # (N, V), (N, L) -> (N,)
        if self.chain is None:
            return next_tokens(logits, self.temperature, self.top_k, self.top_p, self.generator)
        scores = self.chain(seq, logits)
        if self.temperature == 0:
            return scores.argmax(dim=-1)
        return multinomial(torch.softmax(scores, dim=-1), self.generator)

    def top(self, logits: Tensor, k: int, seq: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """The k likeliest tokens of what `choose` draws from: softmax(logits / T) after top-k/top-p.
        Greedy ignores top-k/top-p (the argmax survives them), so its candidates come from softmax(logits).
        With a chain: softmax of the chain's scores (greedy: of the rules' scores, at temperature 1)."""
        logits = logits.float()
        if self.chain is not None:
            logits = self.chain(seq, logits)
        elif self.temperature > 0:
            logits = filter_logits(logits / self.temperature, self.top_k, self.top_p)
        probs, ids = torch.softmax(logits, dim=-1).topk(min(k, logits.shape[-1]), dim=-1)
        return ids, probs


class Generation:
    """One run: the preallocated sequence buffer, the decoder state and which rows are finished."""

    def __init__(self, model: Transformer, input_ids: Tensor, max_new_tokens: int, sampler: Sampler,
                 use_cache: bool = True, eos_id: int | None = None, bos_id: int | None = None,
                 src_mask: Tensor | None = None, src_ext: Tensor | None = None, unk_id: int | None = None,
                 vocab_limit: int | None = None, banned_ids: tuple[int, ...] | None = None,
                 rules: DecodingRules | None = None, plan: DecodePlan | None = None) -> None:
        check_settings(max_new_tokens, sampler.temperature, sampler.top_k, sampler.top_p)
        src_ext = copy_ids(model, input_ids, src_ext, unk_id)
        self.plan = plan  # the thread count of each step (generation/threads.py); None: torch's, untouched
        with plan.prefilling() if plan is not None else nullcontext():
            prefix, memory, src_mask = prepare(model, input_ids, bos_id, src_mask)
        rows, self.prefix_len = prefix.shape
        self.model, self.sampler = model, _with_rules(sampler, rules, self.prefix_len, max_new_tokens, prefix.device)
        self.eos, self.fill_id = stop_ids(rules, eos_id, prefix.device)
        self.buffer = torch.empty(rows, self.prefix_len + max_new_tokens, dtype=torch.long, device=prefix.device)
        self.buffer[:, : self.prefix_len] = prefix
        self.length = self.prefix_len
        self.max_new_tokens = max_new_tokens
        window = position_window(model)
        self.cropped = window is not None and self.prefix_len > window
        # The last new token is never fed back, so the cache needs one slot fewer than the final length.
        if rules is not None and banned_ids is None:
            banned_ids = ()  # the rules' bad_words_ids hold the folder's bans, applied where transformers applies them
        self.state = DecoderState(model, rows, self.prefix_len + max_new_tokens - 1, use_cache, memory, src_mask,
                                  src_ext, unk_id, vocab_limit, banned_ids)
        self.finished = torch.zeros(rows, dtype=torch.bool, device=prefix.device)

    @property
    def sequence(self) -> Tensor:
        """(N, P + new so far): the prompt (or bos) and every token generated."""
        return self.buffer[:, : self.length]

    def steps(self, want_probs: bool = True, need_attention: bool = False,
              need_candidates: int | None = None) -> Iterator[GenerationStep]:
        """Generate, yielding after each new token; stops at the limit or when every row is finished. A plan's
        thread counts hold until the steps end (torch's count comes back then)."""
        with torch_threads(None) if self.plan is not None else nullcontext():
            yield from self._steps(want_probs, need_attention, need_candidates)

    def _steps(self, want_probs: bool, need_attention: bool,
               need_candidates: int | None) -> Iterator[GenerationStep]:
        plan = self.plan
        for index in range(self.max_new_tokens):
            seq = self.sequence
            if plan is None:
                logits, attentions = self.state.logits(seq, need_attention)  # (N, V)
            else:
                logits, attentions = plan.run(index, lambda seq=seq: self.state.logits(seq, need_attention))
            tokens = self.sampler.choose(logits, seq)  # (N,)
            if self.eos is not None:
                tokens = tokens.masked_fill(self.finished, self.fill_id)  # finished rows pad (pad, else eos)
                self.finished = self.finished | torch.isin(tokens, self.eos)
            top = self.sampler.top(logits, need_candidates, seq) if need_candidates else None
            self.buffer[:, self.length] = tokens
            self.length += 1
            probs = chosen_probs(logits, tokens, self.sampler.temperature) if want_probs else None
            yield GenerationStep(index, tokens, probs, self.finished, self.state.slid, self.cropped, attentions, top,
                                 passes=self.state.passes, p_gen=self.state.p_gen)
            if self.eos is not None and bool(self.finished.all()):
                return


def _with_rules(sampler: Sampler, rules: DecodingRules | None, prefix_len: int, max_new_tokens: int,
                device: torch.device) -> Sampler:
    """The sampler with transformers' processors for `rules` and its own knobs (none without rules)."""
    if rules is None:
        return sampler
    from tui_lab.generation.processors import ScoreChain

    chain = ScoreChain(rules, prefix_len, prefix_len + max_new_tokens, device, sampler.temperature, sampler.top_k,
                       sampler.top_p)
    return replace(sampler, chain=chain)


def generate(model: Transformer, input_ids: Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, beam_size: int = 1,
             eos_id: int | None = None, bos_id: int | None = None, generator: torch.Generator | None = None,
             on_step: Callable[[GenerationStep], None] | None = None, src_mask: Tensor | None = None,
             nat_length: int | None = None, src_ext: Tensor | None = None, unk_id: int | None = None,
             vocab_limit: int | None = None, banned_ids: tuple[int, ...] | None = None,
             rules: DecodingRules | None = None, beam_sample: bool = False, plan: DecodePlan | None = None) -> Tensor:
    """Continue `input_ids` by up to `max_new_tokens` tokens.

    Decoder-only: input (N, L) prompt -> (N, L + new). Encoder-decoder: input (N, S) source (with an
    optional (N, S) `src_mask`, True on real tokens) -> target (N, 1 + new) starting with `bos_id`.
    Temperature 0 is greedy; otherwise softmax(logits / T) is sampled after top-k / top-p truncation,
    seeded by `generator`. `beam_size` > 1 runs beam search (deterministic; sampling settings and
    `on_step` do not apply), or with `beam_sample` transformers' beam sample (the beams drawn at `temperature`
    with top-k / top-p, seeded by `generator`). Rows stop at `eos_id` and are padded with it; the whole call stops when
    every row has. `on_step` receives each `GenerationStep` as it is made. A NAT model (decoder_mode nat-*)
    takes the one-pass path (`generation/nat.py`); `nat_length` sets how many tokens it decodes.
    Copy models (`tui_lab.model.copy`): `src_ext` (N, S) is the source in its extended vocabulary (default:
    the source itself); the output may hold its temporary ids (copied words), fed back as `unk_id`.
    `vocab_limit` (the tokenizer's size, when smaller than the model's vocab) keeps every id the tokenizer
    cannot decode from being chosen. `banned_ids` are never chosen either (transformers' one-token
    `bad_words_ids`); None means the model's own, `model.banned_ids` (a Hugging Face folder's generation config).
    `rules` (`generation.rules.DecodingRules`, a folder's generation_config.json as `hf.generation_config` reads
    it) are applied with transformers' own processors; their eos list replaces `eos_id`. None: no rules.
    `plan` (`threads.decode_plan`) sets each step's thread count (not beam search's); None leaves torch's.
    """
    check_settings(max_new_tokens, temperature, top_k, top_p, beam_size)
    check_input(model, input_ids, bos_id)
    check_nat(model.config, nat_length, beam_size)
    with eval_mode(model), torch.inference_mode():
        if is_nat(model.config):
            return _nat_sequence(model, input_ids, max_new_tokens, Sampler(temperature, top_k, top_p, generator),
                                 eos_id, bos_id, src_mask, nat_length, on_step)
        if beam_size > 1:
            drawn = dict(temperature=temperature, top_k=top_k, top_p=top_p, generator=generator) \
                if beam_sample and temperature > 0 else {}
            return beam_search(model, input_ids, max_new_tokens, beam_size, use_cache, eos_id, bos_id, src_mask,
                               src_ext=src_ext, unk_id=unk_id, vocab_limit=vocab_limit, banned_ids=banned_ids,
                               rules=rules, **drawn)
        sampler = Sampler(temperature, top_k, top_p, generator)
        run = Generation(model, input_ids, max_new_tokens, sampler, use_cache, eos_id, bos_id, src_mask, src_ext,
                         unk_id, vocab_limit, banned_ids, rules, plan)
        for step in run.steps(want_probs=on_step is not None):
            if on_step is not None:
                on_step(step)
        return run.sequence.clone()


def stream(model: Transformer, input_ids: Tensor, max_new_tokens: int, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, eos_id: int | None = None,
           bos_id: int | None = None, generator: torch.Generator | None = None, src_mask: Tensor | None = None,
           need_attention: bool = False, need_candidates: int | None = None, nat_length: int | None = None,
           src_ext: Tensor | None = None, unk_id: int | None = None,
           vocab_limit: int | None = None, banned_ids: tuple[int, ...] | None = None,
           rules: DecodingRules | None = None, plan: DecodePlan | None = None) -> Iterator[GenerationStep]:
    """Yield one `GenerationStep` per new token (see `generate` for the arguments).

    With `need_attention`, each step carries the attention row of the query that predicted the token,
    computed on the manual attention path for that one position: weights (N, H, 1, context).
    With `need_candidates` = k, each step carries the k likeliest tokens it was drawn from (`Sampler.top`).
    """
    sampler = Sampler(temperature, top_k, top_p, generator)
    check_settings(max_new_tokens, temperature, top_k, top_p)
    if need_candidates is not None and need_candidates < 1:
        raise ValueError(f"need_candidates must be >= 1, got {need_candidates}")
    check_input(model, input_ids, bos_id)
    check_nat(model.config, nat_length)

    def steps() -> Iterator[GenerationStep]:
        if is_nat(model.config):  # one decoder pass, handed out a position at a time
            return nat_steps(model, input_ids, max_new_tokens, sampler, eos_id, bos_id, src_mask, nat_length,
                             need_attention, need_candidates, GenerationStep)
        run = Generation(model, input_ids, max_new_tokens, sampler, use_cache, eos_id, bos_id, src_mask, src_ext,
                         unk_id, vocab_limit, banned_ids, rules, plan)
        return run.steps(want_probs=True, need_attention=need_attention, need_candidates=need_candidates)

    return evaluating(model, steps)


def _nat_sequence(model: Transformer, input_ids: Tensor, max_new_tokens: int, sampler: Sampler,
                  eos_id: int | None, bos_id: int | None, src_mask: Tensor | None, nat_length: int | None,
                  on_step: Callable[[GenerationStep], None] | None) -> Tensor:
    """NAT's answer in generate's shape: (N, 1 + new) starting with bos, finished rows padded with eos."""
    columns = [torch.full((input_ids.shape[0],), bos_id, dtype=torch.long, device=input_ids.device)]
    for step in nat_steps(model, input_ids, max_new_tokens, sampler, eos_id, bos_id, src_mask, nat_length,
                          step_type=GenerationStep):
        columns.append(step.ids)
        if on_step is not None:
            on_step(step)
    return torch.stack(columns, dim=1)


@contextmanager
def eval_mode(model: Transformer) -> Iterator[None]:
    """Dropout off while generating; the model's previous mode comes back afterwards. A model already in eval
    mode is left alone: `eval()` and `train()` set an attribute on every module, ~0.5 ms each on the English toy
    (a third of a one-token generation's time)."""
    if not any(module.training for module in model.modules()):
        yield
        return
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
