"""Backward hooks on the named hook points (TransformerLens's `add_hook(..., dir="bwd")`): the gradient of a
metric with respect to each point's activation, read or replaced as it flows back.

A backward hook is `fn(grad, name) -> None | Tensor` (None reads; a tensor replaces the gradient that flows on to
earlier points). The pass runs with gradients on even inside `torch.no_grad()`; a model whose parameters are
frozen still gets them (its embeddings' output is made to require a gradient). Gradients are taken with
`torch.autograd.grad` with respect to the hooked activations only: no parameter's `.grad` is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from tui_lab.mechanism.cache import ActivationCache, select
from tui_lab.model.hooks import HookFn, Hooks, attached, point_names


def _differentiable(value: Tensor, _: str) -> Tensor | None:
    """hook_embed: a leaf that requires a gradient when nothing upstream does (frozen weights)."""
    return None if value.requires_grad else value.detach().requires_grad_(True)


def run_with_backward_hooks(
    model, *inputs: Any, metric: Callable[[Tensor], Tensor], hooks: Iterable[tuple[str, HookFn]], **kwargs: Any
) -> float:
    """`metric(model(*inputs))` (summed when it gives one value per row), then its backward pass with `hooks`
    ((name, fn(grad, name))) on the gradients of those points' activations. Returns the metric."""
    pairs = list(hooks)
    names = select(model.config, [name for name, _ in pairs])
    seen: dict[str, Tensor] = {}

    def keep(value: Tensor, name: str) -> None:
        if not value.requires_grad:  # nothing the metric can depend on through it (e.g. a constant mask)
            return
        seen[name] = value
        for point, fn in pairs:
            if point == name:
                value.register_hook(lambda grad, fn=fn, name=name: fn(grad, name))

    embeds = [n for n in point_names(model.config) if n.endswith("hook_embed")]
    forward = Hooks([(n, _differentiable) for n in embeds] + [(n, keep) for n in dict.fromkeys(names)])
    with torch.enable_grad(), attached(model, forward):
        value = metric(model(*inputs, **kwargs)).sum()
        if seen:
            torch.autograd.grad(value, list(seen.values()), allow_unused=True)
    return float(value.detach())


def run_with_gradients(
    model, *inputs: Any, metric: Callable[[Tensor], Tensor], names: Iterable[str], **kwargs: Any
) -> tuple[float, ActivationCache, ActivationCache]:
    """(metric, the activations at `names`, the metric's gradient with respect to each), as detached tensors."""
    names = list(names)
    acts, grads = ActivationCache(), ActivationCache()

    def record(grad: Tensor, name: str) -> None:
        grads[name] = grad.detach()

    def read(value: Tensor, name: str) -> None:
        acts[name] = value.detach()

    with attached(model, [(name, read) for name in names]):
        value = run_with_backward_hooks(model, *inputs, metric=metric, hooks=[(n, record) for n in names], **kwargs)
    for name in names:  # a point the metric does not depend on: a zero gradient
        grads.setdefault(name, torch.zeros_like(acts[name]))
    return value, acts, ActivationCache((n, grads[n]) for n in names)
