"""The Attention view's two captures, as the thread workers run them: a typed sentence, and a ViT's image.

Each takes what it reads as values fixed on the UI thread (the model, the ids: a later keystroke or a new model
changes nothing here) and a `post` to send its one message back: `Captured`, or `CaptureFailed` with the error's
first line (shown under the grid, never a crash). A cancelled worker posts nothing: a newer capture replaced it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.message import Message
from textual.worker import get_current_worker

from tui_lab.app import grids
from tui_lab.app.views.attention import capture as work
from tui_lab.app.views.attention import mlm, vit

Post = Callable[[Message], Any]


@dataclass(frozen=True)
class SentenceRun:
    """One capture of the typed sentence (and target), as the inputs gave it."""

    model: Any
    tokenizer: Any
    generation: int
    src_ids: list[int]
    src: list[str]
    tgt_ids: list[int] | None
    tgt: list[str]
    predicted: list[str]
    translate: bool  # the decoder input is the model's own greedy translation, written first
    limit: int  # the most tokens that translation may write
    guess: bool  # a masked-LM model: its guesses for each [MASK] too


def failed(err: Exception) -> work.CaptureFailed:
    return work.CaptureFailed(str(err).splitlines()[0] if str(err) else type(err).__name__)


def capture_sentence(run: SentenceRun, post: Post) -> None:
    try:
        target = work.translation(run.model, run.tokenizer, run.src_ids, run.limit) if run.translate else \
            (run.tgt_ids, run.tgt, run.predicted, None)
        result, entropy, learned = work.capture(run.model, run.src_ids, target[0])
        guesses = mlm.predictions(run.model, run.src_ids, run.tokenizer) if run.guess else None
    except Exception as err:  # noqa: BLE001 - shown inline, never a crash
        post(failed(err))
        return
    if not get_current_worker().is_cancelled:
        post(work.Captured(result, entropy, run.src, target[1], target[2], learned, run.generation, guesses,
                           translation=target[3], inputs=(run.model, run.src_ids, target[0])))


def capture_image(model: Any, config: Any, index: int, generation: int, post: Post) -> None:
    """A ViT: the held-out image `index` of the shapes task; the grid's labels are the patches."""
    try:
        result, entropy, pixels, caption, image = vit.capture_image(model, config, index)
    except Exception as err:  # noqa: BLE001 - shown inline, never a crash
        post(failed(err))
        return
    if not get_current_worker().is_cancelled:
        post(work.Captured(result, entropy, vit.patch_labels(config), [], [], None, generation,
                           inputs=(model, image, None), image=(pixels, caption)))


def capture_job(live: Any, inputs: Any, post: Post) -> tuple[Callable[[], None], str]:
    """The capture of what `inputs` (the view's `AttentionInputs`) hold with the `live` model, as a job for a
    thread worker, and the line that says what it does meanwhile."""
    if vit.is_vit(live.config):
        return partial(capture_image, live.model, live.config, vit.image_index(inputs.source), live.generation,
                       post), "capturing attention..."
    src_ids, src, tgt_ids, tgt, predicted = inputs.ids()
    run = SentenceRun(live.model, live.tokenizer, live.generation, src_ids, src, tgt_ids, tgt, predicted,
                      translate=inputs.translating, limit=min(grids.MAX_TOKENS, live.config.max_len - 1),
                      guess=mlm.is_mlm(live.config) and live.tokenizer is not None)
    doing = "translating, then capturing attention..." if run.translate else "capturing attention..."
    return partial(capture_sentence, run, post), doing
