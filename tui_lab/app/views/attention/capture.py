"""The Attention view's work off the UI thread: one captured pass, and inputs the live model can read.

`capture` runs the model once with weights captured and returns every grid with its per-head entropy.
`translation` decodes the model's own greedy target for a source (the decoder input when the target is
left empty). `model_inputs` finds text the loaded model's tokenizer covers (its task's held-out example, a line of
the built-in corpus, or words from its own vocabulary), so a loaded checkpoint never shows all `<unk>`.
Both import torch; the view calls them from thread workers and gets messages back.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from tui_lab.app.views.attention import mlm
from tui_lab.app.views.attention.grids import POS_ROWS


class Captured(Message):
    """Attention grids of one pass: {(kind, layer): [head][query][key]}, entropies, and the labels."""

    def __init__(self, grids_by_kind: dict[tuple[str, int], list], entropy: dict[tuple[str, int], list[float]],
                 src: list[str], tgt: list[str], predicted: list[str], learned: list | None, generation: int,
                 guesses: list | None = None, translation: str | None = None, inputs: tuple | None = None,
                 image: tuple[list[list[float]], str] | None = None) -> None:
        super().__init__()
        self.image = image  # a ViT's image (grey pixels) and its caption, else None
        self.inputs = inputs  # (source ids, decoder input ids or None) the pass read: the inside-one-head panel's
        self.guesses = guesses  # a masked-LM model: [(position, [(token, p)])] per [MASK], else None
        self.translation = translation  # the model's own greedy target, when it was the decoder input
        self.grids, self.entropy, self.src, self.tgt = grids_by_kind, entropy, src, tgt
        self.predicted, self.learned, self.generation = predicted, learned, generation

    def note(self, hint: str) -> str:
        """The info line under the new grid: a masked LM's guesses, whose target the decoder read, or `hint`."""
        if self.guesses is not None:
            return mlm.describe(self.guesses)
        if self.translation is not None:  # say whose target the decoder read: the model's own
            return f"decoder input = the model's own greedy translation: {self.translation!r} · {hint}"
        return hint


class CaptureFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class InputsFound(Message):
    """Text the live model's tokenizer covers, found for `generation` (a newer model ignores it)."""

    def __init__(self, source: str, target: str | None, where: str, generation: int) -> None:
        super().__init__()
        self.source, self.target, self.where, self.generation = source, target, where, generation


def capture(model: Any, src_ids: list[int], tgt_ids: list[int] | None) -> tuple[dict, dict, list | None]:
    """Run the model once with weights captured (worker thread): grids, entropies, the learned table."""
    import torch

    device = next(model.parameters()).device
    # A ViT reads pixels (1, C, I, I) rather than ids.
    src = src_ids if isinstance(src_ids, torch.Tensor) else torch.tensor([src_ids], device=device)  # (1, S)
    tgt = torch.tensor([tgt_ids], device=device) if tgt_ids is not None else None  # (1, T)
    with torch.no_grad():
        out = model.run(src, tgt, need_weights=True)
        grids, entropy = {}, {}
        for cap in out.attentions:
            w = cap.weights[0].float()  # (H, Lq, Lk)
            grids[(cap.kind, cap.layer)] = w.cpu().tolist()
            # mean over queries of -sum p ln p (nats); masked keys have p = 0 and add nothing. Linformer's weights
            # per position (model/efficient.py) can be negative, no distribution: no entropy for them.
            if config_kind(model) != "linformer" or cap.kind != "encoder-self":
                entropy[(cap.kind, cap.layer)] = (-(w * w.clamp_min(1e-12).log()).sum(-1)).mean(-1).cpu().tolist()
        table = getattr(model, "pos_embed", None)
        weight = getattr(table, "weight", None)
        learned = weight[:POS_ROWS].float().cpu().tolist() if weight is not None else None
        if src.dim() == 2:  # relative positions (T5's bias, Shaw's table) over the query x key positions
            from tui_lab.model.relative import position_grids

            length = tgt.shape[1] if tgt is not None else src.shape[1]
            grids |= {key: grid.cpu().tolist() for key, grid in position_grids(model, length).items()}
    return grids, entropy, learned


def config_kind(model) -> str:
    return getattr(getattr(model, "config", None), "self_attention", "softmax")


def translation(model: Any, tokenizer: Any, src_ids: list[int], limit: int) -> tuple[list[int], list[str],
                                                                                    list[str], str]:
    """The model's greedy target for `src_ids` as a decoder input (worker thread).

    (decoder input ids, their labels, what each query wrote, the decoded text). The decoder input is bos and
    every written token but the last; each query's row is then labelled by the token it wrote, </s> included,
    exactly as a typed target's rows are labelled by the token they predict (teacher forcing)."""
    import torch

    from tui_lab.generation import generate

    device = next(model.parameters()).device
    # A translation rarely runs past twice its source; the cap keeps a capture short on a CPU.
    budget = max(1, min(limit, 2 * len(src_ids) + 8))
    out = generate(model, torch.tensor([src_ids], device=device), budget, temperature=0.0,
                   bos_id=tokenizer.bos_id, eos_id=tokenizer.eos_id, vocab_limit=tokenizer.vocab_size)
    written = out[0, 1:].tolist()  # (new,) greedy tokens, </s> last when it ended
    fed = [tokenizer.bos_id, *written[:-1]]
    return fed, list(tokenizer.token_strings(fed)), list(tokenizer.token_strings(written)), tokenizer.decode(written)


def model_inputs(tokenizer: Any, encoder_decoder: bool) -> tuple[str, str | None, str]:
    """(source, target or None, where it came from): text this tokenizer covers, from the model's own data."""
    from tui_lab.data.tasks import TASKS, load_task

    for name in TASKS:
        task = load_task(name)
        if task.tokenizer == tokenizer:
            source, target = max(task.examples("val"), key=lambda pair: len(pair[0].split()))
            return source, target if encoder_decoder else None, f"a held-out example of the {name} task"
    if not encoder_decoder:
        from tui_lab.data.corpus import builtin_corpus

        for line in builtin_corpus().replace("\n", " ").split(". "):
            words = line.split()
            if 5 <= len(words) <= 12 and not tokenizer.unknown(line):
                return line, None, "a line of the built-in corpus"
    special = tokenizer.special_ids
    ids = [i for i in range(tokenizer.vocab_size) if i not in special][:8]
    text = tokenizer.decode(ids)
    return text, text if encoder_decoder else None, "the first words of its vocabulary"
