"""Beam search: keep the `beam_size` best hypotheses per input, ranked by length-normalised log-prob.

Each input gets B rows (beams) in one batch; after every step the best B of the B x V continuations
survive, and the KV cache follows them with `cache.reorder`. A beam that emits eos is finished: it may
only continue with eos, at no cost and without growing its length, so it keeps competing with the
beams still running. Scores are divided by length ** length_penalty (1.0: the mean log-prob per token),
so short hypotheses are not preferred just for having fewer negative terms (Wu et al. 2016 use a
smoothed form of the same idea).

Dimension legend: N inputs, B beams, V vocabulary, P prefix, L sequence so far.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.generation.decoder_state import DecoderState, copy_ids, prepare
from tui_lab.model import Transformer


class Beams:
    """Scores, lengths and finished flags of N x B hypotheses, and the rows that hold them."""

    def __init__(self, inputs: int, beam_size: int, device: torch.device) -> None:
        self.n, self.b = inputs, beam_size
        self.scores = torch.zeros(inputs, beam_size, device=device)  # (N, B) summed log-probs
        self.scores[:, 1:] = float("-inf")  # all beams start identical: let only the first expand
        self.lengths = torch.zeros(inputs, beam_size, device=device)  # (N, B) tokens counted for the norm
        self.finished = torch.zeros(inputs, beam_size, dtype=torch.bool, device=device)

    def advance(self, logp: Tensor, eos_id: int | None, penalty: float) -> tuple[Tensor, Tensor]:
        """(N*B, V) log-probs -> (rows to keep (N*B,), their new tokens (N*B,)), updating the beams."""
        vocab = logp.shape[-1]
        logp = logp.view(self.n, self.b, vocab)
        if eos_id is not None:
            only_eos = torch.full((vocab,), float("-inf"), device=logp.device)
            only_eos[eos_id] = 0.0
            logp = torch.where(self.finished[..., None], only_eos, logp)
        lengths = self.lengths + (~self.finished).float()  # (N, B)
        total = self.scores[..., None] + logp  # (N, B, V)
        ranked = (total / lengths[..., None] ** penalty).view(self.n, -1)
        chosen = ranked.topk(self.b, dim=-1).indices  # (N, B) into B*V
        beam, token = chosen // vocab, chosen % vocab
        self.scores = total.view(self.n, -1).gather(1, chosen)
        self.lengths = lengths.gather(1, beam)
        self.finished = self.finished.gather(1, beam)
        if eos_id is not None:
            self.finished = self.finished | (token == eos_id)
        rows = (torch.arange(self.n, device=logp.device)[:, None] * self.b + beam).view(-1)
        return rows, token.view(-1)

    def best(self, penalty: float) -> Tensor:
        """(N,) index of each input's best beam by length-normalised score."""
        return (self.scores / self.lengths.clamp(min=1) ** penalty).argmax(dim=-1)


def beam_search(model: Transformer, input_ids: Tensor, max_new_tokens: int, beam_size: int,
                use_cache: bool = True, eos_id: int | None = None, bos_id: int | None = None,
                src_mask: Tensor | None = None, length_penalty: float = 1.0, src_ext: Tensor | None = None,
                unk_id: int | None = None, vocab_limit: int | None = None,
                banned_ids: tuple[int, ...] | None = None) -> Tensor:
    """The best of `beam_size` hypotheses per input: (N, P + new), finished beams padded with eos.

    Copy models rank over the extended vocabulary (`src_ext`, see `loop.generate`); `banned_ids` as there."""
    src_ext = copy_ids(model, input_ids, src_ext, unk_id, rows_per_input=beam_size)
    prefix, memory, src_mask = prepare(model, input_ids, bos_id, src_mask, rows_per_input=beam_size)
    rows, prefix_len = prefix.shape
    seq = torch.empty(rows, prefix_len + max_new_tokens, dtype=torch.long, device=prefix.device)
    seq[:, :prefix_len] = prefix
    state = DecoderState(model, rows, prefix_len + max_new_tokens - 1, use_cache, memory, src_mask, src_ext, unk_id,
                         vocab_limit, banned_ids)
    beams = Beams(input_ids.shape[0], beam_size, prefix.device)
    length = prefix_len
    for _ in range(max_new_tokens):
        logits, _ = state.logits(seq[:, :length])  # (N*B, V)
        keep, tokens = beams.advance(torch.log_softmax(logits.float(), dim=-1), eos_id, length_penalty)
        seq = seq[keep]
        seq[:, length] = tokens
        state.reorder(keep)
        length += 1
        if eos_id is not None and bool(beams.finished.all()):
            break
    best = beams.best(length_penalty)  # (N,)
    return seq.view(beams.n, beam_size, -1)[torch.arange(beams.n, device=seq.device), best, :length]
