"""`run_with_cache` and `run_with_hooks`, as TransformerLens calls them, on the model's named hook points.

The points and their shapes are listed in `tui_lab.model.hooks`. Refusal of the families part 1 does not
cover lives here too (`require_causal`), so every tool says the same line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from tui_lab.model.hooks import HookFn, Hooks, attached, point_names, stack_names

Names = Iterable[str] | Callable[[str], bool] | None


class ActivationCache(dict):
    """Point name -> activation, in the order the pass reached them: `cache["blocks.0.hook_resid_pre"]`."""

    def stack(self, names: Iterable[str]) -> Tensor:
        """The named activations stacked on a new first axis (e.g. every layer's resid_pre)."""
        return torch.stack([self[name] for name in names])


def require_causal(config, tool: str) -> None:
    """Part 1 covers the causal families (GPT-2 and Llama shapes); one line for the rest."""
    if config.family == "encoder-decoder":
        raise ValueError(f"{tool}: covers decoder-only models; for an encoder-decoder the lens, ablation and "
                         "patching read its decoder stream (the core's src=, the app's Attention view)")
    if config.family != "decoder-only" or config.head != "lm":
        raise ValueError(f"{tool}: only decoder-only language models are covered (family {config.family!r}, "
                         f"head {config.head!r})")


def require_stream(config, tool: str) -> None:
    """The lens, ablation and patching read a decoder's stream: decoder-only language models and encoder-decoders
    (whose decoder reads the source through cross-attention); one line for the rest."""
    if config.family != "encoder-decoder":
        require_causal(config, tool)
    elif config.copy:
        raise ValueError(f"{tool}: a copy (pointer-generator) model's output mixes in a copy distribution over the "
                         "source that the unembedding leaves out; use a model without copy")


def stream_inputs(ids: Tensor, src: Tensor | None) -> tuple[Tensor, ...]:
    """The model's arguments for decoder ids (N, L): (ids,) alone, or (src, ids) with the source (1, S) or (N, S)
    repeated for every row (an encoder-decoder)."""
    return (ids,) if src is None else (src.expand(ids.shape[0], -1), ids)


def select(config, names: Names) -> list[str]:
    """The points `names` asks for: None every one, a callable as a filter, else the names (checked)."""
    every = point_names(config)
    if names is None:
        return every
    if callable(names):
        return [n for n in every if names(n)]
    asked, known = list(names), set(every)
    for name in asked:
        if name not in known:
            raise ValueError(f"hook point {name!r} does not exist in this model")
    return asked


def run_with_cache(model, *inputs: Any, names: Names = None, detach: bool = True, **kwargs: Any
                   ) -> tuple[Tensor, ActivationCache]:
    """`model(*inputs, **kwargs)` and the activations at `names` (what the pass used, after any replacement
    by hooks attached earlier). `detach=False` keeps them in the autograd graph."""
    cache = ActivationCache()

    def keep(value: Tensor, name: str) -> None:
        cache[name] = value.detach() if detach else value

    with attached(model, Hooks((name, keep) for name in select(model.config, names))):
        logits = model(*inputs, **kwargs)
    return logits, cache


def run_with_hooks(model, *inputs: Any, hooks: Iterable[tuple[str, HookFn]], **kwargs: Any) -> Tensor:
    """`model(*inputs, **kwargs)` with `hooks` ((name, fn(value, name) -> None | replacement)) attached."""
    with attached(model, hooks):
        return model(*inputs, **kwargs)


def layer_points(config, point: str) -> list[str]:
    """`blocks.{l}.<point>` for every layer of a causal stack (`decoder.{l}.<point>` for an encoder-decoder's)."""
    prefix = stack_names(config.family)[1]
    return [f"{prefix}.{i}.{point}" for i in range(config.decoder_layers)]


def head_points(config) -> list[tuple[str, str]]:
    """(row label, `hook_z` point) of every attention a head can be ablated in: each layer's self-attention; for
    an encoder-decoder the encoder's, then each decoder layer's self- and cross-attention."""
    if config.family != "encoder-decoder":
        return [(f"L{i}", point) for i, point in enumerate(layer_points(config, "attn.hook_z"))]
    rows = [(f"enc L{i}", f"encoder.{i}.attn.hook_z") for i in range(config.encoder_layers)]
    for i in range(config.decoder_layers):
        rows += [(f"dec L{i} self", f"decoder.{i}.attn.hook_z"), (f"dec L{i} cross", f"decoder.{i}.cross_attn.hook_z")]
    return rows
