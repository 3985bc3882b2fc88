"""`DecodingRules` and the sampling knobs as transformers' own logits processors, in the order its `generate`
builds them (`GenerationMixin._get_logits_processor`), so a Hugging Face folder decodes here as it does there.

Imported only when a run has rules (a Hugging Face folder): a lab model's run never imports transformers.

Dimension legend: N rows, L sequence so far, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor
from transformers.generation.logits_process import (
    ForcedBOSTokenLogitsProcessor,
    ForcedEOSTokenLogitsProcessor,
    LogitNormalization,
    LogitsProcessorList,
    MinLengthLogitsProcessor,
    MinNewTokensLengthLogitsProcessor,
    MinPLogitsWarper,
    NoBadWordsLogitsProcessor,
    NoRepeatNGramLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from tui_lab.generation.rules import DecodingRules


def rule_processors(rules: DecodingRules, prefix_len: int, max_length: int,
                    device: torch.device) -> LogitsProcessorList:
    """The processors that shape scores whatever the search (greedy, sampling, beams).

    `prefix_len`: the sequence's length before the first new token; `max_length` its length after the last."""
    eos = torch.tensor(rules.eos_ids, dtype=torch.long, device=device) if rules.eos_ids else None
    out = LogitsProcessorList()
    if rules.repetition_penalty != 1.0:
        out.append(RepetitionPenaltyLogitsProcessor(rules.repetition_penalty))
    if rules.no_repeat_ngram_size > 0:
        out.append(NoRepeatNGramLogitsProcessor(rules.no_repeat_ngram_size))
    if rules.bad_words_ids:
        out.append(NoBadWordsLogitsProcessor([list(seq) for seq in rules.bad_words_ids], eos))
    # transformers turns min_new_tokens into min_length = prompt + min_new_tokens and applies both
    min_length = prefix_len + rules.min_new_tokens if rules.min_new_tokens else rules.min_length
    if eos is not None and min_length > 0:
        out.append(MinLengthLogitsProcessor(min_length, eos, device=device))
    if eos is not None and rules.min_new_tokens > 0:
        out.append(MinNewTokensLengthLogitsProcessor(prefix_len, rules.min_new_tokens, eos, device=device))
    if rules.forced_bos_id is not None:
        out.append(ForcedBOSTokenLogitsProcessor(rules.forced_bos_id))
    if rules.forced_eos_id is not None:
        forced = rules.forced_eos_id
        out.append(ForcedEOSTokenLogitsProcessor(max_length, list(forced) if isinstance(forced, tuple) else forced,
                                                 device=device))
    return out


def sampling_processors(temperature: float, top_k: int | None, top_p: float | None,
                        min_p: float | None = None, keep: int = 1) -> LogitsProcessorList:
    """transformers' warpers, applied only when sampling (temperature > 0). `keep`: their min_tokens_to_keep, which
    beam sample raises to the number of eos ids + 1 so a beam can always go on."""
    out = LogitsProcessorList()
    if temperature == 0:
        return out
    if temperature != 1.0:
        out.append(TemperatureLogitsWarper(temperature))
    if top_k is not None and top_k != 0:
        out.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=keep))
    if top_p is not None and top_p < 1.0:
        out.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=keep))
    if min_p is not None:
        out.append(MinPLogitsWarper(min_p=min_p, min_tokens_to_keep=keep))
    return out


class ScoreChain:
    """The rules' processors, then the warpers, then (renormalize_logits) a last log-softmax, as transformers
    orders them: (N, L) sequence and (N, V) logits -> (N, V) scores."""

    def __init__(self, rules: DecodingRules, prefix_len: int, max_length: int, device: torch.device,
                 temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None,
                 keep: int = 1) -> None:
        self.processors = LogitsProcessorList([*rule_processors(rules, prefix_len, max_length, device),
                                               *sampling_processors(temperature, top_k, top_p, rules.min_p, keep)])
        if rules.renormalize:
            self.processors.append(LogitNormalization())

    def __call__(self, seq: Tensor, logits: Tensor) -> Tensor:
        return self.processors(seq, logits.float())
