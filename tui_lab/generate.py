"""Generation: `generate` returns the ids, `stream` yields one `GenerationStep` per new token.

The pieces live in `tui_lab.generation` (sampling, the cached/uncached decoder state, beam search, the
streaming loop); this module is the front door the CLI, the app and the trainer call.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable

import torch
from torch import Tensor

from tui_lab.generation.beam import beam_search
from tui_lab.generation.settings import check_settings
from tui_lab.generation.stream import Generation, GenerationStep, Sampler, check_input, eval_mode, stream
from tui_lab.model import Transformer

__all__ = ["GenerationStep", "generate", "stream"]


def generate(model: Transformer, input_ids: Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, beam_size: int = 1,
             eos_id: int | None = None, bos_id: int | None = None, generator: torch.Generator | None = None,
             on_step: Callable[[GenerationStep], None] | None = None, src_mask: Tensor | None = None) -> Tensor:
    """Continue `input_ids` by up to `max_new_tokens` tokens.

    Decoder-only: input (N, L) prompt -> (N, L + new). Encoder-decoder: input (N, S) source (with an
    optional (N, S) `src_mask`, True on real tokens) -> target (N, 1 + new) starting with `bos_id`.
    Temperature 0 is greedy; otherwise softmax(logits / T) is sampled after top-k / top-p truncation,
    seeded by `generator`. `beam_size` > 1 runs beam search (deterministic; sampling settings and
    `on_step` do not apply). Rows stop at `eos_id` and are padded with it; the whole call stops when
    every row has. `on_step` receives each `GenerationStep` as it is made.
    """
    check_settings(max_new_tokens, temperature, top_k, top_p, beam_size)
    check_input(model, input_ids, bos_id)
    with eval_mode(model), torch.inference_mode():
        if beam_size > 1:
            return beam_search(model, input_ids, max_new_tokens, beam_size, use_cache, eos_id, bos_id, src_mask)
        sampler = Sampler(temperature, top_k, top_p, generator)
        run = Generation(model, input_ids, max_new_tokens, sampler, use_cache, eos_id, bos_id, src_mask)
        for step in run.steps(want_probs=on_step is not None):
            if on_step is not None:
                on_step(step)
        return run.sequence.clone()


class _CallableModule(types.ModuleType):
    """`import tui_lab.generate` binds the name `tui_lab.generate` to this module, hiding the lazy
    function of the same name; making the module callable keeps `tui_lab.generate(model, ...)` working."""

    def __call__(self, *args, **kwargs) -> Tensor:
        return generate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
