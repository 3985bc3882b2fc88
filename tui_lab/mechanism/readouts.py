"""What the app's mechanism panels compute, on a private copy of the live model, a step at a time.

Hooks live on `model.hooks`, which every thread that runs the model reads: a lens or an ablation attaching
its hooks to the live model while the Generate view streams from it would put them into that generation too.
So every panel works on `private_copy(model)` (a deep copy, in eval mode): the live model never carries a
panel's hooks, and a generation, a training step or a second panel can run beside it unchanged. The copy
costs the model's memory once per run (a lock would instead hold a generation back until the job ends).

Each run uses the thread count an uncached decoding pass of this model takes now (`generation.threads`,
chosen per run for the model's op size and the load): the passes are as small as a decode step's. On the shared
2-core machine under load, 16 ablation passes of the English toy took 6-11 s on torch's 2 threads and 0.19 s on 1
(threads spinning at every barrier).
`on_step(done, total)` is the caller's progress; it may raise to stop the work between passes.
Dimension legend: L length, H heads.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from tui_lab.mechanism.ablation import AblationTable, head_ablation
from tui_lab.mechanism.cache import require_causal, require_stream
from tui_lab.mechanism.lens import LensTable, logit_lens
from tui_lab.mechanism.patching import PatchTable, patch_residual
from tui_lab.mechanism.tokens import single_token, token_text

Step = Callable[[int, int], None] | None


@contextmanager
def job_threads(model: Any, rows: int = 1) -> Iterator[None]:
    """The block on the thread count chosen now for an uncached pass of `rows` rows of `model`."""
    from tui_lab.generation.threads import decode_threads, torch_threads

    with torch_threads(decode_threads(model, use_cache=False, rows=rows)):
        yield


def private_copy(model: Any) -> Any:
    """A deep copy of `model` in eval mode, with no hooks attached: what a panel attaches its hooks to."""
    from tui_lab.devices import check_free

    check_free(sum(t.numel() * t.element_size() for t in model.parameters()), str(_device(model)),
               "a private copy of the model (a panel's hooks never touch the live one)")
    twin = copy.deepcopy(model)
    twin.hooks = None
    return twin.eval()


def _device(model: Any) -> torch.device:
    return next(model.parameters()).device


def lens_of(model: Any, codec: Any, ids: list[int], on_step: Step = None, src: list[int] | None = None
            ) -> LensTable:
    """The logit lens of one prompt (one pass, so one step); an encoder-decoder's target, read with `src`."""
    require_stream(model.config, "lens")
    with job_threads(model):
        table = logit_lens(private_copy(model), codec, ids, src=src)
    if on_step is not None:
        on_step(1, 1)
    return table


def ablation_of(model: Any, ids: list[int], mode: str = "mean", on_step: Step = None,
                src: list[int] | None = None, on_stage: Callable[[str], None] | None = None) -> AblationTable:
    """The next-token loss change when each head's output is ablated, on one text of at least two tokens (an
    encoder-decoder: the target, teacher-forced, with the source `src`). `on_stage(what)` hears the steps before
    the passes: on transformer-2017-base at load 17 the thread count's first measurement (since replaced by a choice
    from the load now, tui_lab/cpu_threads.py) took 145 s, the 144 passes 95 s, and a bar with no word sat at 0%."""
    require_stream(model.config, "ablation")
    if len(ids) < 2:
        raise ValueError("text: ablation measures the next-token loss, which needs at least two tokens")
    stage = on_stage or (lambda _: None)
    stage("copying the model")
    twin = private_copy(model)
    device = _device(twin)
    source = None if src is None else torch.tensor([src], device=device)
    stage("choosing the thread count for the load now")
    with job_threads(model):
        stage("the clean pass, then one pass per head")
        return head_ablation(twin, torch.tensor([ids], device=device), mode, on_step=on_step, src=source)


@torch.no_grad()
def translation(model: Any, codec: Any, src: list[int], tool: str) -> tuple[int, list[int]]:
    """(start token, what the encoder-decoder writes for `src` greedily, its end token included)."""
    bos, eos = getattr(codec, "bos_id", None), getattr(codec, "eos_id", None)
    if bos is None:
        raise ValueError(f"{tool}: an encoder-decoder's decoder input is its own translation, which needs a "
                         "tokenizer with a start token (this model has none: load a trained one, e.g. numbers-de)")
    from tui_lab.generation import generate

    budget = max(2, min(model.config.max_len - 1, 2 * len(src) + 8))  # a translation rarely runs past twice its source
    out = generate(model, torch.tensor([src], device=_device(model)), budget, temperature=0.0, bos_id=bos,
                   eos_id=eos, vocab_limit=getattr(codec, "vocab_size", None))
    return bos, out[0, 1:].tolist()


def greedy_target(model: Any, codec: Any, src: list[int], tool: str) -> list[int]:
    """An encoder-decoder's decoder input for `src`: its start token, then its own greedy translation but the last
    token, so each position reads as the token the model wrote next (teacher forcing on its own output)."""
    bos, written = translation(model, codec, src, tool)
    return [bos, *written[:-1]] if len(written) > 1 else [bos, *written]


def diverging_target(model: Any, codec: Any, clean: list[int], corrupt: list[int]) -> tuple[list[int], int, int]:
    """Two sources' translations up to where they first differ: (the shared decoder input, the clean source's
    next token, the corrupted one's). Patching then asks where the decoder's stream decides between them."""
    bos, a = translation(model, codec, clean, "patching")
    _, b = translation(model, codec, corrupt, "patching")
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if k is None:
        raise ValueError("corrupt: both sources translate to the same tokens as far as the shorter goes; "
                         "type a corrupted source the model translates otherwise")
    return [bos, *a[:k]], a[k], b[k]


@dataclass
class Attribution:
    """values[l][h]: head (l, h)'s direct share of logit(answer) - logit(wrong) at the last position; `total`
    is that difference in the model's own logits (the heads are part of it, with embeddings, biases, MLPs)."""

    values: list[list[float]]
    answer: str
    wrong: str
    total: float


@torch.no_grad()
def attribution_of(model: Any, codec: Any, ids: list[int], on_step: Step = None) -> Attribution:
    """Direct logit attribution at the last position for the model's own top prediction against its second
    (`codec` names them; None: by id)."""
    require_causal(model.config, "attribution")
    twin = private_copy(model)
    x = torch.tensor(ids, device=_device(twin))  # (L,)
    from tui_lab.mechanism.attribution import head_logit_attribution

    with job_threads(model):
        logits = twin(x[None])[0, -1].float()  # (V,)
        answer, wrong = (int(i) for i in logits.topk(2).indices)
        values = head_logit_attribution(twin, x, answer, wrong)  # (layers, H)
    if on_step is not None:
        on_step(1, 1)
    name = (lambda i: f"#{i}") if codec is None else (lambda i: token_text(codec, i))  # None: ids hashed from words
    return Attribution(values.tolist(), name(answer), name(wrong),
                       float(logits[answer] - logits[wrong]))


@dataclass
class Patching:
    table: PatchTable
    tokens: list[str]  # the clean prompt's tokens, one per position
    answer: str
    wrong: str


def _answer(codec: Any, text: str, logits: Tensor, field: str) -> int:
    """The token typed in `field`, or (empty) the run's own top prediction at the last position."""
    return single_token(codec, text, field) if text.strip() else int(logits[0, -1].argmax())


@torch.no_grad()
def patching_of(model: Any, codec: Any, clean: list[int], corrupt: list[int], answer: str = "",
                wrong: str = "", on_step: Step = None) -> Patching:
    """Activation patching of the residual stream from the clean prompt into the corrupted one. An empty answer
    is the clean run's top prediction, an empty wrong the corrupted run's (as in the IOI-style setups).

    An encoder-decoder: the two prompts are two sources (any lengths); both runs read the same decoder input, the
    two translations up to where they first differ, and the answer and wrong tokens are where each goes next
    (`diverging_target`); the patched stream is the decoder's."""
    require_stream(model.config, "patching")
    twin = private_copy(model)
    device = _device(twin)
    sources: tuple[Tensor | None, Tensor | None] = (None, None)
    with job_threads(model, rows=len(clean)):
        if model.config.family == "encoder-decoder":
            sources = (torch.tensor(clean, device=device), torch.tensor(corrupt, device=device))
            clean, a, w = diverging_target(twin, codec, clean, corrupt)
            corrupt = clean
            a = single_token(codec, answer, "answer") if answer.strip() else a
            w = single_token(codec, wrong, "wrong") if wrong.strip() else w
        clean_t, corrupt_t = torch.tensor(clean, device=device), torch.tensor(corrupt, device=device)
        if sources[0] is None:
            a = _answer(codec, answer, twin(clean_t[None]), "answer")
            w = _answer(codec, wrong, twin(corrupt_t[None]), "wrong")
        if a == w:
            raise ValueError(f"wrong: the answer and the wrong token are both {token_text(codec, a)!r}; "
                             "type a wrong token that differs (or a corrupt prompt the model answers otherwise)")
        table = patch_residual(twin, clean_t, corrupt_t, a, w, on_step=on_step, clean_src=sources[0],
                               corrupt_src=sources[1])
    return Patching(table, [token_text(codec, i) for i in clean], token_text(codec, a), token_text(codec, w))


def head_detectors_of(model: Any, on_step: Step = None) -> Any:
    """Every head's previous-token, duplicate-token and induction score (`head_detectors.head_scores`, its
    defaults: 8 rows of random tokens repeated, token seed 0), one pass per row for the progress."""
    from tui_lab.mechanism.head_detectors import default_seq_len, head_scores

    require_causal(model.config, "heads")
    with torch.no_grad(), job_threads(model):
        return head_scores(private_copy(model), default_seq_len(model.config), on_step=on_step)
