"""The position-wise feed-forward network and the activations it can use (the dense FFN; a mixture of
them is `moe.py`)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tui_lab.config import GATED
from tui_lab.model.hooks import HookScope
from tui_lab.model.linear import Linear

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "swiglu": F.silu,  # SiLU on the gate branch, multiplied by the up branch (Shazeer 2020)
    "silu": F.silu,  # swish without a gate (Marian's "swish")
    "none": lambda x: x,  # seed 002's Q&A: without it down(up(x)) is the single matrix W_down W_up (+ biases)
    "geglu": lambda x: F.gelu(x, approximate="tanh"),  # on the gate branch: T5 v1.1's gelu_new (Shazeer 2020)
    "reglu": F.relu,  # on the gate branch: T5's "gated-relu" (Shazeer 2020)
}



class _SiluGate(torch.autograd.Function):
    """silu(gate) * up with the numbers autograd gives, bit for bit, and fewer (N, L, F) buffers: the product is
    made in place, and the backward makes the two gradients in the buffers of `gate` and `up` (read for the last
    time there: silu's backward, then silu(gate) recomputed in place, not kept from the forward). On a CPU each
    fresh buffer of a training step is fresh pages (the allocator hands them back between steps), so a buffer
    costs more than the arithmetic it holds: this makes one of the three autograd makes (issue 39: the Llama
    shape's step ~2% less CPU time than with a fresh buffer for each gradient). A leaf input (a tensor the caller
    holds) is never written: its gradients get fresh buffers."""

    @staticmethod
    def forward(ctx, gate: Tensor, up: Tensor) -> Tensor:
        ctx.save_for_backward(gate, up)
        ctx.reuse = not (gate.is_leaf or up.is_leaf)
        return F.silu(gate).mul_(up)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        gate, up = ctx.saved_tensors
        # the product's rule, then silu's own backward kernel, as autograd chains them
        d_gate = up.mul_(grad) if ctx.reuse else grad * up
        torch.ops.aten.silu_backward.grad_input(d_gate, gate, grad_input=d_gate)
        return d_gate, F.silu(gate, inplace=ctx.reuse).mul_(grad)


def silu_gate(gate: Tensor, up: Tensor) -> Tensor:
    """SwiGLU's hidden layer silu(gate) * up (N, L, F). With gradients on, the backward overwrites `gate` and `up`
    when they are not leaves: pass tensors nothing reads after the forward (FeedForward: its projections' own
    outputs)."""
    if torch.is_grad_enabled() and (gate.requires_grad or up.requires_grad):
        return _SiluGate.apply(gate, up)
    return F.silu(gate) * up


class FeedForward(nn.Module):
    """Position-wise MLP: down(act(up(x))), or down(act(gate(x)) * up(x)) for SwiGLU, GeGLU and ReGLU."""

    def __init__(self, config) -> None:
        super().__init__()
        self.act = ACTIVATIONS[config.activation]
        self.up = Linear(config.d_model, config.d_ff, bias=config.bias)
        self.gate = Linear(config.d_model, config.d_ff, bias=config.bias) if config.activation in GATED else None
        self.down = Linear(config.d_ff, config.d_model, bias=config.bias)

    def forward(self, x: Tensor, hooks: HookScope | None = None) -> Tensor:  # (N, L, E) -> (N, L, E)
        if hooks is not None:
            return self._hooked(x, hooks)
        if self.gate is None:
            hidden = self.act(self.up(x))
        elif self.act is F.silu:
            hidden = silu_gate(self.gate(x), self.up(x))
        else:
            hidden = self.act(self.gate(x)) * self.up(x)
        return self.down(hidden)  # hidden (N, L, F)

    def _hooked(self, x: Tensor, hooks: HookScope) -> Tensor:
        """The same maths through `mlp.hook_pre` (the gate's, for SwiGLU), `hook_pre_linear` and `hook_post`."""
        if self.gate is None:
            return self.down(hooks("hook_post", self.act(hooks("hook_pre", self.up(x)))))
        gate, up = hooks("hook_pre", self.gate(x)), hooks("hook_pre_linear", self.up(x))
        return self.down(hooks("hook_post", self.act(gate) * up))
