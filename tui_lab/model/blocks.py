"""The layers of a Transformer: norms, feed-forward networks and the blocks that wire them.

Each variant axis maps through a small table to the function that builds or applies it.
Dimension legend: N batch, L length, E d_model, F d_ff.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor, nn

from tui_lab.config import is_nat
from tui_lab.model.attention import SelfAttention
from tui_lab.model.batchnorm import MaskedBatchNorm, keep_from_allowed, with_keep
from tui_lab.model.feed_forward import FeedForward
from tui_lab.model.guided_cross import make_cross
from tui_lab.model.hooks import HookScope
from tui_lab.model.moe import SparseMoE
from tui_lab.model.norm_hooks import hooked_norm
from tui_lab.model.rms_norm import RMSNorm
from tui_lab.model.scaled_dot import dropout

NORMS: dict[str, Callable[..., nn.Module]] = {
    "layernorm": lambda c: nn.LayerNorm(c.d_model, eps=c.norm_eps, bias=c.bias),
    "rmsnorm": lambda c: RMSNorm(c.d_model, eps=c.norm_eps),  # nn.RMSNorm, a cheaper backward (rms_norm.py)
    "batchnorm": lambda c: MaskedBatchNorm(c.d_model, eps=c.norm_eps, bias=c.bias),  # padding left out (batchnorm.py)
}

def make_norm(config) -> nn.Module:
    return NORMS[config.norm](config)


def make_ffn(config) -> nn.Module | None:
    """The dense FFN, the sparse mixture of them (ffn 'moe', tui_lab/model/moe.py), or none (ffn 'none')."""
    if config.ffn == "none":
        return None
    if config.ffn == "moe":
        return SparseMoE(config)
    return FeedForward(config)


def dropped(drop: nn.Dropout, x: Tensor) -> Tensor:
    """`drop(x)`, skipped where it is the identity (eval, or p = 0): decoding one token at a time calls it
    three times per layer, and each module call costs more than the tiny matmuls around it (~5% of a step).
    Training draws with scaled_dot's `dropout` (uniform >= p: half the cost of bernoulli on a CPU)."""
    return dropout(x, drop.p) if drop.training and drop.p > 0 else x


def post_norm(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: nn.Module, drop: nn.Module) -> Tensor:
    """2017, section 3.1: LayerNorm(x + Sublayer(x)); the norm sits on the residual path."""
    return norm(x + dropped(drop, sublayer(x)))


def pre_norm(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: nn.Module, drop: nn.Module) -> Tensor:
    """GPT-2: x + Sublayer(LayerNorm(x)); the residual path only adds."""
    return x + dropped(drop, sublayer(norm(x)))


RESIDUALS = {"post": post_norm, "pre": pre_norm}


def hooked(f: Callable[[Tensor], Tensor], hooks: HookScope, name: str) -> Callable[[Tensor], Tensor]:
    """A sublayer whose output passes the point `name` (hook_attn_out, hook_mlp_out) before the residual."""
    return lambda h: hooks(name, f(h))


def hooked_ffn(ffn: nn.Module, hooks: HookScope) -> Callable[[Tensor], Tensor]:
    """The FFN with its `mlp.*` points (a dense one; a mixture of experts has none) and `hook_mlp_out`."""
    mlp = hooks.sub("mlp.") if isinstance(ffn, FeedForward) else None
    return lambda h: hooks("hook_mlp_out", ffn(h) if mlp is None else ffn(h, mlp))


def ln1(norm: nn.Module, keep, hooks: HookScope) -> Callable[[Tensor], Tensor]:
    """The attention's norm with its points `ln1.hook_scale`, `ln1.hook_normalized` (model/norm_hooks.py)."""
    return hooked_norm(norm, with_keep(norm, keep), hooks.sub("ln1."))


def ffn_sublayer(block: nn.Module, x: Tensor, keep, hooks: HookScope | None = None) -> Tensor:
    """A block's FFN with its residual (and its points when hooked); an attention-only block passes x on."""
    if block.ffn is None:
        return x
    norm = with_keep(block.ffn_norm, keep)
    if hooks is None:
        return block.residual(x, block.ffn, norm, block.drop)
    norm = hooked_norm(block.ffn_norm, norm, hooks.sub("ln2."))
    return block.residual(x, hooked_ffn(block.ffn, hooks), norm, block.drop)


class EncoderBlock(nn.Module):
    """Self-attention over the whole sequence (or causal, for a decoder-only stack) and an FFN."""

    def __init__(self, config, causal: bool = False) -> None:
        super().__init__()
        self.residual = RESIDUALS[config.norm_position]
        self.attn_norm = make_norm(config)
        self.attn = SelfAttention(config, causal=causal)
        self.ffn = make_ffn(config)
        self.ffn_norm = None if self.ffn is None else make_norm(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: Tensor, allowed=None, start: int = 0, cache=None, hooks: HookScope | None = None) -> Tensor:
        """(N, L, E) -> (N, L, E); `hooks` (model/hooks.py) are this block's points, None for none."""
        def attn(h: Tensor) -> Tensor:
            return self.attn(h, allowed, start, cache, None if hooks is None else hooks.sub("attn."))

        keep = keep_from_allowed(allowed)  # only batchnorm uses it: its statistics skip padding
        if hooks is None:
            x = self.residual(x, attn, with_keep(self.attn_norm, keep), self.drop)
            return ffn_sublayer(self, x, keep)
        x = hooks("hook_resid_pre", x)
        x = hooks("hook_resid_mid", self.residual(x, hooked(attn, hooks, "hook_attn_out"),
                                                  ln1(self.attn_norm, keep, hooks), self.drop))
        return hooks("hook_resid_post", ffn_sublayer(self, x, keep, hooks))


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention on the encoder output, and an FFN (2017, section 3.1)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.residual = RESIDUALS[config.norm_position]
        self.attn_norm = make_norm(config)
        # A NAT decoder (decoder_mode nat-*) predicts every position at once: no causal mask.
        self.attn = SelfAttention(config, causal=not is_nat(config))
        self.cross_norm = make_norm(config)
        self.cross = make_cross(config)  # softmax, or seed 002's guided kinds
        self.ffn = make_ffn(config)
        self.ffn_norm = None if self.ffn is None else make_norm(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, y: Tensor, memory_kv, allowed=None, memory_allowed=None, start: int = 0, cache=None,
                hooks: HookScope | None = None) -> Tensor:
        """(N, T, E) -> (N, T, E), reading the encoder's keys/values `memory_kv`; `hooks` as EncoderBlock's."""
        def attn(h: Tensor) -> Tensor:
            return self.attn(h, allowed, start, cache, None if hooks is None else hooks.sub("attn."))

        def cross(h: Tensor) -> Tensor:
            return self.cross(h, memory_kv, memory_allowed, None if hooks is None else hooks.sub("cross_attn."),
                              start, cache)

        keep = keep_from_allowed(allowed)  # only batchnorm uses it: its statistics skip padding
        if hooks is None:
            y = self.residual(y, attn, with_keep(self.attn_norm, keep), self.drop)
            y = self.residual(y, cross, with_keep(self.cross_norm, keep), self.drop)
            return ffn_sublayer(self, y, keep)
        y = hooks("hook_resid_pre", y)
        y = hooks("hook_resid_mid", self.residual(y, hooked(attn, hooks, "hook_attn_out"),
                                                  ln1(self.attn_norm, keep, hooks), self.drop))
        y = hooks("hook_resid_mid_cross", self.residual(y, hooked(cross, hooks, "hook_cross_attn_out"),
                                                        with_keep(self.cross_norm, keep), self.drop))
        return hooks("hook_resid_post", ffn_sublayer(self, y, keep, hooks))
