"""What the decoder is fed: the checked input and its prefix, then "the sequence so far" turned into
next-token logits, through a KV cache or by recomputing.

Both paths see exactly the same tokens at the same positions, so cached and uncached greedy decoding
agree. Learned positions have no row past `max_len`: the decoder then sees only the last `max_len`
tokens at positions 0..max_len-1 (a sliding window). Every cached key and value depends on its position,
so once the window slides the cache is useless and each step recomputes the window.

Dimension legend: N batch (rows), L sequence so far, S source, V vocabulary, H heads.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.generation import lengths
from tui_lab.generation.rules import DecodingRules
from tui_lab.model import AttentionCapture, Transformer
from tui_lab.model.copy import feedable, p_gen_of


def position_window(model: Transformer) -> int | None:
    """How many tokens the decoder may see at once: max_len for learned positions, unlimited otherwise."""
    return lengths.position_window(model.config)


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


def copy_ids(model: Transformer, input_ids: Tensor, src_ext: Tensor | None, unk_id: int | None,
             rows_per_input: int = 1) -> Tensor | None:
    """A copy model's extended source ids (N*r, S), its own ids when none are given; None without copy."""
    if not model.config.copy:
        return None
    if src_ext is None:
        src_ext = input_ids
    if src_ext.shape != input_ids.shape:
        raise ValueError(f"src_ext must have the source's shape {tuple(input_ids.shape)}, got {tuple(src_ext.shape)}")
    if unk_id is None and bool((src_ext >= model.config.vocab).any()):
        raise ValueError("unk_id: a source with temporary (out-of-vocabulary) ids needs the <unk> id to feed back")
    return src_ext.repeat_interleave(rows_per_input, dim=0)


def banned(model: Transformer, banned_ids: tuple[int, ...] | None) -> tuple[int, ...]:
    """The ids generation may never choose: `banned_ids`, or None for the model's own (`model.banned_ids`, set
    by `hf.load` from a folder's generation_config.json: Marian's pad, its decoder's start)."""
    ids = tuple(getattr(model, "banned_ids", ())) if banned_ids is None else tuple(banned_ids)
    bad = [i for i in ids if not 0 <= i < model.config.vocab]
    if bad:
        raise ValueError(f"banned_ids must lie in 0..{model.config.vocab - 1} (the model's vocab), got {bad[0]}")
    return ids


def stop_ids(rules: DecodingRules | None, eos_id: int | None, device: torch.device) -> tuple[Tensor | None, int]:
    """(the ids that end a row (K,) or None, what a finished row is padded with). With rules, theirs alone
    (transformers stops on the generation config's eos list, whatever the tokenizer says); else `eos_id`."""
    ids = rules.eos_ids if rules is not None else ((eos_id,) if eos_id is not None else ())
    if not ids:
        return None, 0
    fill = rules.fill_id if rules is not None else eos_id
    return torch.tensor(ids, dtype=torch.long, device=device), int(fill)


class DecoderState:
    """Feeds a growing (N, L) sequence to the decoder and returns the logits for the next token."""

    def __init__(self, model: Transformer, rows: int, capacity: int, use_cache: bool,
                 memory: Tensor | None = None, src_mask: Tensor | None = None, src_ext: Tensor | None = None,
                 unk_id: int | None = None, vocab_limit: int | None = None,
                 banned_ids: tuple[int, ...] | None = None) -> None:
        self.model = model
        # Copy models: the source's extended ids (N, S), the id a copied word is fed back as, and the
        # last step's p_gen (N,)
        self.src_ext, self.unk_id, self.p_gen = src_ext, unk_id, None
        # A tokenizer smaller than the model's vocab (a checkpoint padded to a multiple of 64 or 128) cannot
        # decode ids past its size: they get no probability at all, so they are never chosen.
        self.vocab_limit = vocab_limit if vocab_limit is not None and vocab_limit < model.config.vocab else None
        self.banned = banned(model, banned_ids)
        self.memory, self.src_mask = memory, src_mask  # (N, S, E), (N, S): encoder-decoders only
        self.window = position_window(model)
        self.slid = False
        if self.window is not None:
            capacity = min(capacity, self.window)
        self.cache = model.new_cache(rows, max(capacity, 1)) if use_cache else None
        self.passes = 0  # decoder forward passes, reported with each step (AT: one per new token)

    def logits(self, seq: Tensor, need_attention: bool = False) -> tuple[Tensor, list[AttentionCapture] | None]:
        """(N, L) sequence so far -> (N, V) logits of the next token, plus the last query's attention rows."""
        logits, rows = self._next(seq, need_attention)
        if self.vocab_limit is not None or self.banned:
            logits = logits.clone()
        if self.vocab_limit is not None:
            logits[:, self.vocab_limit:self.model.config.vocab] = float("-inf")  # a copy model's temporary ids stay
        if self.banned:  # transformers' NoBadWordsLogitsProcessor for one-token bans: -inf before any choice
            logits[:, list(self.banned)] = float("-inf")
        return logits, rows

    def _next(self, seq: Tensor, need_attention: bool) -> tuple[Tensor, list[AttentionCapture] | None]:
        if self.window is not None and seq.shape[1] > self.window:
            self.slid, self.cache = True, None  # positions shift: every cached K/V is stale from now on
            seq = seq[:, -self.window:]
        if self.cache is None:
            return self._decode(seq, need_attention)
        new = seq[:, self.cache.length:]  # (N, L - cached)
        if need_attention and new.shape[1] > 1:
            # Prefill all but the last token on the fused path; weights only for the new position.
            self._decode(new[:, :-1], False)
            new = new[:, -1:]
        return self._decode(new, need_attention)

    def reorder(self, rows: Tensor) -> None:
        """Keep rows `rows` (beam search). Beams of one source share its memory, so memory needs no reorder."""
        if self.cache is not None:
            self.cache.reorder(rows)

    def _decode(self, ids: Tensor, need_attention: bool) -> tuple[Tensor, list[AttentionCapture] | None]:
        self.passes += 1
        copy = self.src_ext is not None
        ids = feedable(ids, self.model.config.vocab, self.unk_id) if copy else ids
        out = self.model.decode(ids, self.memory, self.src_mask, cache=self.cache,
                                need_weights=need_attention or copy, src_ext=self.src_ext,
                                last_only=not (need_attention or copy))
        if copy:
            self.p_gen = p_gen_of(out[1][-1])[:, -1]  # the copy capture comes last
        if not need_attention:
            return (out[0] if copy else out)[:, -1], None
        logits, captures = out
        rows = [AttentionCapture(c.stack, c.layer, c.kind, c.weights[:, :, -1:]) for c in captures]  # (N, H, 1, ctx)
        return logits[:, -1], rows
