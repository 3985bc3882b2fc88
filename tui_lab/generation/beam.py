"""Beam search as transformers' `generate(num_beams=B)` runs it, step for step, over our model and KV cache.

Each input keeps B running hypotheses (beams) and B finished ones. At every step the B x V continuations
of the running beams are scored by summed log-prob (after the rules' processors, which see log-probs here,
as in transformers), and the best K = max(2, 1 + number of eos ids) x B are taken: those that end (an eos, or
the length limit) among the first B become finished candidates, scored sum / new_length ** length_penalty;
the best B that do not end keep running, and the cache follows them with `cache.reorder`. Taking K > B
guarantees B continuations that are still running even when the best ones all end.

Beam sample (transformers' `do_sample` with `num_beams`): the processed log-probs also pass the sampling warpers
(temperature, top-k, top-p, keeping at least one token more than there are eos ids), and the K continuations
are drawn without replacement from the softmax of the accumulated scores over all B x V, then sorted by score,
instead of being the K best; everything after is the same.

The run stops at the length limit, when no running beam can still beat the worst finished one (transformers'
heuristic: its best score divided by its current length, or by the longest possible with
`early_stopping="never"` and a positive penalty), or with `early_stopping=True` once B have finished.
Scores below -1e9 mark "not a candidate", exactly as transformers does, so ties break the same way.

Dimension legend: N inputs, B beams, K candidates, V vocabulary, P prefix, T the longest sequence.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.generation.decoder_state import DecoderState, copy_ids, prepare, stop_ids
from tui_lab.generation.rules import DecodingRules
from tui_lab.generation.sampling import filter_logits, multinomial
from tui_lab.model import Transformer

NOT = -1.0e9  # transformers' score for "not a candidate"


class Beams:
    """Running and finished hypotheses of N inputs, in (N, B, T) buffers of the final length."""

    def __init__(self, prefix: Tensor, inputs: int, beam_size: int, max_length: int, fill: int,
                 eos: Tensor | None, length_penalty: float, early_stopping: bool | str,
                 draw: torch.Generator | None | bool = False) -> None:
        self.n, self.b, self.prefix_len, self.max_length = inputs, beam_size, prefix.shape[1], max_length
        self.draw = draw  # False: rank the candidates; a generator (or None, torch's own): sample them
        self.eos, self.penalty, self.early_stopping = eos, length_penalty, early_stopping
        self.k = max(2, 1 + (len(eos) if eos is not None else 0)) * beam_size
        device = prefix.device
        self.running = torch.full((inputs, beam_size, max_length), fill, dtype=torch.long, device=device)
        self.running[:, :, : self.prefix_len] = prefix.view(inputs, beam_size, -1)
        self.sequences = self.running.clone()  # the finished ones
        self.running_scores = torch.zeros(inputs, beam_size, device=device)
        self.running_scores[:, 1:] = NOT  # all beams start identical: only the first expands
        self.scores = torch.full((inputs, beam_size), NOT, device=device)  # finished, length-normalised
        self.lengths = torch.zeros(inputs, beam_size, dtype=torch.long, device=device)  # finished: new tokens
        self.finished = torch.zeros(inputs, beam_size, dtype=torch.bool, device=device)
        self.open = torch.ones(inputs, 1, dtype=torch.bool, device=device)  # may a running beam still win?
        self.first_b = torch.arange(self.k, device=device) < beam_size
        self.all_hit = False

    def flat(self, length: int) -> Tensor:
        """(N*B, length) the running beams so far."""
        return self.running[:, :, :length].reshape(self.n * self.b, length)

    def advance(self, logp: Tensor, length: int) -> Tensor:
        """(N*B, V) processed log-probs at sequence length `length` -> the cache rows to keep (N*B,)."""
        vocab = logp.shape[-1]
        total = (logp.view(self.n, self.b, vocab) + self.running_scores[:, :, None]).view(self.n, -1)
        top_scores, top = self._candidates(total)  # (N, K)
        source, token = top // vocab, top % vocab
        candidates = _gather(self.running, source)  # (N, K, T)
        candidates[:, :, length] = token
        hits = torch.full_like(token, length + 1 >= self.max_length, dtype=torch.bool)
        if self.eos is not None:
            hits = hits | torch.isin(token, self.eos)
        running_scores = top_scores + hits.to(torch.float32) * NOT
        keep = running_scores.topk(self.b)[1]  # (N, B) the best that go on
        self._finish(candidates, top_scores, hits, length)
        self.running, self.running_scores = _gather(candidates, keep), _gather(running_scores, keep)
        self.all_hit = bool(hits.all())
        rows = torch.arange(self.n, device=logp.device)[:, None] * self.b + _gather(source, keep)
        self._update_open(length + 1)
        return rows.view(-1)

    def _candidates(self, total: Tensor) -> tuple[Tensor, Tensor]:
        """(N, B*V) accumulated scores -> the K candidates' (scores, flat indices), best first."""
        if self.draw is False:
            return total.topk(self.k)
        top = multinomial(torch.softmax(total, dim=-1), self.draw, self.k)  # without replacement
        scores, order = total.gather(1, top).sort(dim=-1, descending=True)
        return scores, top.gather(1, order)

    def _finish(self, candidates: Tensor, top_scores: Tensor, hits: Tensor, length: int) -> None:
        """Merge the candidates that end among the first B into the B best finished (transformers' order)."""
        just = hits & self.first_b[None, :]
        scores = top_scores / ((length + 1 - self.prefix_len) ** self.penalty)
        full = torch.all(self.finished, dim=-1, keepdim=True) & (self.early_stopping is True)
        scores += full.to(torch.float32) * NOT
        scores += (~self.open).to(torch.float32) * NOT
        scores += (~just) * NOT
        merged_scores = torch.cat((self.scores, scores), dim=1)
        best = merged_scores.topk(self.b)[1]
        new_lengths = torch.full_like(top_scores, length + 1 - self.prefix_len, dtype=torch.long)
        self.sequences = _gather(torch.cat((self.sequences, candidates), dim=1), best)
        self.scores = _gather(merged_scores, best)
        self.lengths = _gather(torch.cat((self.lengths, new_lengths), dim=1), best)
        self.finished = _gather(torch.cat((self.finished, just), dim=1), best)

    def _update_open(self, length: int) -> None:
        if self.early_stopping == "never" and self.penalty > 0.0:
            best_length = self.max_length - self.prefix_len
        else:
            best_length = length - self.prefix_len
        best_running = self.running_scores[:, :1] / (best_length ** self.penalty)
        worst_finished = torch.where(self.finished, torch.min(self.scores, dim=1, keepdim=True)[0], NOT)
        self.open = self.open & torch.any(best_running > worst_finished, dim=-1, keepdim=True)

    def done(self) -> bool:
        full = bool(torch.all(self.finished)) and self.early_stopping is True
        return not bool(torch.any(self.open)) or full or self.all_hit

    def best(self) -> Tensor:
        """(N, P + longest of the winners): each input's best finished hypothesis, padded with the fill id."""
        length = self.prefix_len + int(self.lengths[:, 0].max())
        return self.sequences[:, 0, :length]


def _gather(tensor: Tensor, index: Tensor) -> Tensor:
    """tensor (N, K, ...) rows `index` (N, J) along dim 1 -> (N, J, ...)."""
    while index.dim() < tensor.dim():
        index = index.unsqueeze(-1)
    return torch.take_along_dim(tensor, index, dim=1)


def beam_search(model: Transformer, input_ids: Tensor, max_new_tokens: int, beam_size: int,
                use_cache: bool = True, eos_id: int | None = None, bos_id: int | None = None,
                src_mask: Tensor | None = None, length_penalty: float = 1.0, src_ext: Tensor | None = None,
                unk_id: int | None = None, vocab_limit: int | None = None,
                banned_ids: tuple[int, ...] | None = None, rules: DecodingRules | None = None,
                temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None,
                generator: torch.Generator | None = None) -> Tensor:
    """The best of `beam_size` hypotheses per input: (N, P + new), shorter ones padded (pad, else eos).

    Copy models rank over the extended vocabulary (`src_ext`, see `loop.generate`); `banned_ids` as there.
    `rules` (a Hugging Face folder's) bring their eos list, length penalty, early stopping and processors;
    their bans then replace the model's own, applied after log-softmax as transformers applies them.
    `temperature` > 0: beam sample (see above), with `top_k` / `top_p`, drawn with `generator`."""
    src_ext = copy_ids(model, input_ids, src_ext, unk_id, rows_per_input=beam_size)
    prefix, memory, src_mask = prepare(model, input_ids, bos_id, src_mask, rows_per_input=beam_size)
    rows, prefix_len = prefix.shape
    max_length = prefix_len + max_new_tokens
    state = DecoderState(model, rows, max_length - 1, use_cache, memory, src_mask, src_ext, unk_id, vocab_limit,
                         () if rules is not None and banned_ids is None else banned_ids)
    eos, fill = stop_ids(rules, eos_id, prefix.device)
    warp = (temperature, top_k, top_p, 1 + (len(eos) if eos is not None else 1))
    chain = _chain(rules, prefix_len, max_length, prefix.device, *warp) if temperature > 0 or rules is None \
        or rules.shapes_logits else None
    if rules is not None:
        length_penalty = rules.length_penalty
    beams = Beams(prefix, input_ids.shape[0], beam_size, max_length, fill, eos, length_penalty,
                  rules.early_stopping if rules is not None else False, generator if temperature > 0 else False)
    for length in range(prefix_len, max_length):
        seq = beams.flat(length)
        logits, _ = state.logits(seq)  # (N*B, V)
        logp = torch.log_softmax(logits.float(), dim=-1)
        state.reorder(beams.advance(chain(seq, logp) if chain is not None else logp, length))
        if beams.done():
            break
    return beams.best()


def _chain(rules: DecodingRules | None, prefix_len: int, max_length: int, device: torch.device,
           temperature: float, top_k: int | None, top_p: float | None, keep: int):
    """What shapes the log-probs before the beams are chosen: the rules' processors and, for beam sample, the
    warpers, as transformers orders them; without rules (a lab model) only the warpers, or nothing."""
    if rules is None:
        if temperature == 0:
            return None
        return lambda seq, logp: filter_logits(logp / temperature, top_k, top_p)
    from tui_lab.generation.processors import ScoreChain

    return ScoreChain(rules, prefix_len, max_length, device, temperature, top_k, top_p, keep)
