"""Where batches come from and how each family's loss is computed, behind one small interface.

A language model learns next-token prediction on windows of text; an encoder-decoder learns a seq2seq
task with teacher forcing (the decoder reads the target shifted right). Both losses are sums over the
tokens that count (targets equal to IGNORE_INDEX do not), so the trainer can divide by the token count
of the whole global batch and N data-parallel ranks compute exactly the single-process gradient.
Dimension legend: N batch, L length, S source length, T target length, V vocab.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F
from torch import Tensor

from tui_lab.config import is_nat
from tui_lab.data import extended
from tui_lab.generation import generate

IGNORE_INDEX = -100  # the same value as tui_lab.data.tasks.IGNORE_INDEX and torch's default


@dataclass
class Batch:
    inputs: Tensor  # LM: x (N, L); seq2seq: src (N, S)
    targets: Tensor  # LM: y (N, L); seq2seq: tgt_out (N, T), IGNORE_INDEX on padding
    tgt_in: Tensor | None = None  # seq2seq: (N, T), starts with bos
    src_mask: Tensor | None = None  # seq2seq: (N, S), True on real tokens
    # Tasks with texts: the source and targets in each example's extended vocabulary (copy models use them)
    src_ext: Tensor | None = None  # (N, S)
    copy_targets: Tensor | None = None  # (N, T), IGNORE_INDEX on padding like targets

    def rows(self, start: int, stop: int) -> Batch:
        """This rank's shard of the global batch."""
        return Batch(**{f.name: _slice(getattr(self, f.name), start, stop) for f in fields(self)})

    def to(self, device: torch.device | str) -> Batch:
        return Batch(**{f.name: _move(getattr(self, f.name), device) for f in fields(self)})

    def count(self) -> int:
        return int((self.targets != IGNORE_INDEX).sum())


def _slice(t: Tensor | None, start: int, stop: int) -> Tensor | None:
    return None if t is None else t[start:stop]


def _move(t: Tensor | None, device) -> Tensor | None:
    return None if t is None else t.to(device, non_blocking=True)


def token_loss_sum(model, batch: Batch, label_smoothing: float) -> Tensor:
    """Summed cross-entropy over the batch's counted tokens (a scalar tensor); one label per image for a ViT.

    A copy model outputs log P of its mixed distribution over the extended vocabulary, so this is the NLL
    of that distribution (softmax(log P) = P) against the extended targets: a copied name scores as itself."""
    if batch.inputs.dim() == 4:  # images (N, C, I, I) -> logits (N, classes)
        return F.cross_entropy(model(batch.inputs).float(), batch.targets, label_smoothing=label_smoothing,
                               reduction="sum")
    if batch.tgt_in is not None and is_nat(getattr(model, "module", model).config):
        from tui_lab.train.nat_loss import nat_loss_sum

        return nat_loss_sum(model, batch, label_smoothing)
    targets = batch.targets
    if batch.tgt_in is None:
        logits = model(batch.inputs)  # (N, L, V)
    elif is_copy_model(model):
        src_ext = batch.src_ext if batch.src_ext is not None else batch.inputs
        targets = batch.copy_targets if batch.copy_targets is not None else batch.targets
        logits = model(batch.inputs, batch.tgt_in, src_mask=batch.src_mask, src_ext=src_ext)  # (N, T, X)
    else:
        # No target padding mask: the causal mask already keeps real positions from seeing later padding,
        # and the fused causal kernel stays in use.
        logits = model(batch.inputs, batch.tgt_in, src_mask=batch.src_mask)  # (N, T, V)
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), ignore_index=IGNORE_INDEX,
                           label_smoothing=label_smoothing, reduction="sum")


def is_copy_model(model) -> bool:
    """The model (or the one DDP wraps) has the copy mechanism."""
    return bool(getattr(getattr(model, "module", model).config, "copy", False))


class LMSource:
    """Random windows of a tokenized text (tui_lab.data.lm.LMData)."""

    is_seq2seq = False

    def __init__(self, data, seq_len: int) -> None:
        self.data, self.seq_len = data, seq_len
        self.tokenizer = data.tokenizer

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> Batch:
        x, y = self.data.batch(split, batch_size, self.seq_len, generator)  # (N, L) each
        return Batch(x, y)

    def context(self) -> int:
        return self.seq_len

    def sample(self, model, device, step: int, seed: int, new_tokens: int = 120) -> tuple[str, str, str | None]:
        """A completion of the start of the validation text, sampled at temperature 0.8."""
        prompt_ids = self.data.val[:32][None, :].to(device)  # (1, P)
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        ids = generate(model, prompt_ids, new_tokens, temperature=0.8, generator=generator,
                       vocab_limit=self.tokenizer.vocab_size)  # the model's vocab may be padded past it
        prompt_len = prompt_ids.shape[1]
        prompt = self.tokenizer.decode(prompt_ids[0].tolist())
        return prompt, self.tokenizer.decode(ids[0, prompt_len:].tolist()), None


class Seq2SeqSource:
    """Pairs of a seq2seq task (tui_lab.data.tasks.Seq2SeqTask); held-out pairs are never trained on."""

    is_seq2seq = True

    def __init__(self, task) -> None:
        self.task = task
        self.tokenizer = task.tokenizer
        self._max_target = task.max_target_len  # eos included

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> Batch:
        b = self.task.batch(split, batch_size, generator)
        return Batch(b.src, b.tgt_out, b.tgt_in, b.src_mask, b.src_ext, b.tgt_ext)

    def context(self) -> int:
        return self._max_target

    def decode_greedy(self, model, pairs: list, device, batch_size: int = 256,
                      sources_ext: list[list[int]] | None = None) -> list[list[int]]:
        """Greedy translations (ids without bos/eos/pad) of `pairs`' sources; a copy model points with
        `sources_ext` (the sources' extended ids) and may answer with their temporary ids."""
        out: list[list[int]] = []
        for start in range(0, len(pairs), batch_size):
            sources = [src for src, _ in pairs[start:start + batch_size]]
            src, mask = self._pad(sources, device)
            ext = self._pad(sources_ext[start:start + batch_size], device)[0] if sources_ext is not None else None
            ids = greedy_seq2seq(model, src, mask, self.tokenizer.bos_id, self.tokenizer.eos_id,
                                 self._max_target, ext, self.tokenizer.unk_id)
            out += [self._strip(row) for row in ids.tolist()]
        return out

    def translations(self, model, device, split: str, limit: int) -> list[tuple[str, str, str]]:
        """(source, greedy output, target) texts of the split's first `limit` pairs (all with 0)."""
        pairs = self.task.pairs(split)[:limit] if limit else self.task.pairs(split)
        return self._translate(model, device, pairs, self.task.examples(split)[:len(pairs)])

    def _translate(self, model, device, pairs: list, texts: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
        extended_sources = [extended.source_ids(self.tokenizer, src) for src, _ in texts]
        use_ext = is_copy_model(model)
        predictions = self.decode_greedy(model, pairs, device,
                                         sources_ext=[ids for ids, _ in extended_sources] if use_ext else None)
        return [(src, extended.decode(self.tokenizer, pred, oov), tgt)
                for pred, (src, tgt), (_, oov) in zip(predictions, texts, extended_sources, strict=True)]

    def exact_match(self, model, device, limit: int) -> float:
        """The share of held-out outputs whose TEXT equals the target's (a copied name counts as itself)."""
        rows = self.translations(model, device, "val", limit)
        return sum(out == tgt for _, out, tgt in rows) / max(1, len(rows))

    def sample(self, model, device, step: int, seed: int) -> tuple[str, str, str | None]:
        """The greedy translation of one held-out source, rotating through them as training goes."""
        index = step % len(self.task.val)
        ((src, out, tgt),) = self._translate(model, device, [self.task.val[index]], [self.task.examples("val")[index]])
        return src, out, tgt

    def _pad(self, sources: list[list[int]], device) -> tuple[Tensor, Tensor]:
        length = max(len(s) for s in sources)
        src = torch.full((len(sources), length), self.tokenizer.pad_id, dtype=torch.long)
        for i, s in enumerate(sources):
            src[i, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask = torch.arange(length)[None, :] < torch.tensor([len(s) for s in sources])[:, None]  # (N, S)
        return src.to(device), mask.to(device)

    def _strip(self, ids: list[int]) -> list[int]:
        """Drop bos and padding; cut at the first eos."""
        t = self.tokenizer
        out = []
        for i in ids:
            if i == t.eos_id:
                break
            if i not in (t.bos_id, t.pad_id):
                out.append(i)
        return out


def greedy_seq2seq(model, src: Tensor, src_mask: Tensor, bos_id: int, eos_id: int, max_new: int,
                   src_ext: Tensor | None = None, unk_id: int | None = None) -> Tensor:
    """(N, S) sources -> (N, 1 + new) greedy targets starting with bos (padded with eos once done)."""
    return generate(model, src, max_new, temperature=0.0, src_mask=src_mask, bos_id=bos_id, eos_id=eos_id,
                    src_ext=src_ext, unk_id=unk_id)
