"""Named hook points: where a pass lets a caller read an activation or put another in its place.

Names follow TransformerLens, so its tutorials read the same here. A causal (or encoder-only) stack is
`blocks.{l}`; an encoder-decoder names its stacks `encoder.{l}` and `decoder.{l}`. First the embeddings:
`hook_embed` (N, L, E, the token vectors, scaled where the config scales them) and, for added positions,
`hook_pos_embed` (N, L, E) (`encoder.` / `decoder.` before them for an encoder-decoder). Per block:
`hook_resid_pre`, `hook_resid_mid`, `hook_resid_post` (N, L, E), `hook_attn_out`, `hook_mlp_out` (N, L, E),
`attn.hook_q` (N, L, H, D) and `attn.hook_k` / `attn.hook_v` (N, L, K, D) before RoPE and before the KV cache,
`attn.hook_attn_scores` (N, H, Lq, Lk, scaled, masked to -inf) and `attn.hook_pattern` (after softmax),
`attn.hook_z` (N, L, H, D) (per head, before the output projection), and in a dense FFN `mlp.hook_pre` (N, L, F)
(the gate's pre-activation for SwiGLU, whose up branch is `mlp.hook_pre_linear`) and `mlp.hook_post` (what
enters the down projection); an encoder-decoder's decoder blocks also have `cross_attn.*`. After the stack the
final norm: `ln_final.hook_normalized` (N, L, E) (`encoder.ln_final.hook_normalized` for an encoder-decoder's
encoder). Each head's write before the heads are summed: `attn.hook_result` (N, L, H, E), z_h @ W_O^h without the
bias; with RoPE, `attn.hook_rot_q` (N, L, H, D) and `attn.hook_rot_k` (N, L, K, D) after the rotation. Each norm
(a block's `ln1` before attention, `ln2` before the FFN, and `ln_final`): `hook_scale` (N, L, 1), what it divides
by, and `hook_normalized` (N, L, E), its output (model/norm_hooks.py; no `hook_scale` for batchnorm).

A hook is `fn(value, name) -> Tensor | None`: None reads, a tensor replaces. With nothing attached a pass
pays one `is None` test per point (`Transformer.decode` holds `hooks` None).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from torch import Tensor

from tui_lab.config import GATED
from tui_lab.model.positions import ADDITIVE

HookFn = Callable[[Tensor, str], "Tensor | None"]

BLOCK_POINTS = ("hook_resid_pre", "hook_resid_mid", "hook_resid_post", "hook_attn_out", "hook_mlp_out")
ATTENTION_POINTS = ("hook_q", "hook_k", "hook_v", "hook_attn_scores", "hook_pattern", "hook_z", "hook_result")
CROSS_POINTS = ("hook_q", "hook_attn_scores", "hook_pattern", "hook_z", "hook_result")
NORM_POINTS = ("hook_scale", "hook_normalized")
FINAL_NORM = "ln_final.hook_normalized"


class Hooks:
    """The functions attached to a pass, by point name; applied in the order they were added."""

    def __init__(self, pairs: Iterable[tuple[str, HookFn]] = ()) -> None:
        self._fns: dict[str, list[HookFn]] = {}
        for name, fn in pairs:
            self.add(name, fn)

    def add(self, name: str, fn: HookFn) -> None:
        self._fns.setdefault(name, []).append(fn)

    def names(self) -> list[str]:
        return list(self._fns)

    def wants(self, name: str) -> bool:
        return name in self._fns

    def apply(self, name: str, value: Tensor) -> Tensor:
        for fn in self._fns.get(name, ()):
            out = fn(value, name)
            if out is not None:
                value = out
        return value

    def scope(self, prefix: str) -> HookScope | None:
        """The points under `prefix` (e.g. "blocks.3."), or None when nothing is attached there: a block
        without hooks then runs exactly the unhooked code."""
        if not any(name.startswith(prefix) for name in self._fns):
            return None
        return HookScope(self, prefix)

    def merged(self, other: Hooks | None) -> Hooks:
        """These hooks, then `other`'s, at every point."""
        both = Hooks((name, fn) for name, fns in self._fns.items() for fn in fns)
        for name, fns in ({} if other is None else other._fns).items():
            for fn in fns:
                both.add(name, fn)
        return both


class HookScope:
    """One block's (or one attention's) view of the hooks: names relative to its prefix."""

    def __init__(self, hooks: Hooks, prefix: str) -> None:
        self.hooks, self.prefix = hooks, prefix

    def __call__(self, name: str, value: Tensor) -> Tensor:
        return self.hooks.apply(self.prefix + name, value)

    def wants(self, name: str) -> bool:
        return self.hooks.wants(self.prefix + name)

    def sub(self, prefix: str) -> HookScope | None:
        return self.hooks.scope(self.prefix + prefix)


def stack_names(family: str) -> tuple[str, str]:
    """The prefixes of (encoder stack, decoder stack): one stack is `blocks`, two are `encoder` / `decoder`."""
    if family == "encoder-decoder":
        return "encoder", "decoder"
    return "blocks", "blocks"


def point_names(config) -> list[str]:
    """Every hook point of a model built from `config`, in the order a pass reaches them."""
    enc, dec = stack_names(config.family)
    names: list[str] = []

    def stack(prefix: str, layers: int, cross: bool) -> None:
        if layers == 0:
            return
        embeds = f"{prefix}." if config.family == "encoder-decoder" else ""
        names.append(f"{embeds}hook_embed")
        if config.positions in ADDITIVE:
            names.append(f"{embeds}hook_pos_embed")
        mlp = ("mlp.hook_pre", "mlp.hook_pre_linear", "mlp.hook_post") if config.activation in GATED \
            else ("mlp.hook_pre", "mlp.hook_post")
        attention = attention_points(config)
        norm = norm_points(config)
        pre = config.norm_position == "pre"  # post-LN: the norm after the sublayer's sum
        for i in range(layers):
            block = f"{prefix}.{i}."
            ln1, ln2 = (block + "ln1." + p for p in norm), (block + "ln2." + p for p in norm)
            names.append(block + "hook_resid_pre")
            names.extend(ln1 if pre else ())
            names.extend(f"{block}attn.{p}" for p in attention)
            names.append(block + "hook_attn_out")
            names.extend(() if pre else ln1)
            names.append(block + "hook_resid_mid")
            if cross:
                names.extend(f"{block}cross_attn.{p}" for p in CROSS_POINTS)
                names.extend(block + p for p in ("hook_cross_attn_out", "hook_resid_mid_cross"))
            if config.ffn != "none":  # attention-only: no MLP
                names.extend(ln2 if pre else ())
                names.extend(block + p for p in mlp if config.ffn == "dense")
                names.append(block + "hook_mlp_out")
                names.extend(() if pre else ln2)
            names.append(block + "hook_resid_post")

    final = [f"ln_final.{p}" for p in norm_points(config)]
    stack(enc, config.encoder_layers, cross=False)
    if config.has_encoder and config.final_norm:
        names.extend(f"encoder.{p}" if config.family == "encoder-decoder" else p for p in final)
    stack(dec, config.decoder_layers, cross=config.family == "encoder-decoder")
    if config.family != "encoder-only" and config.final_norm:
        names.extend(final)
    return names


def attention_points(config) -> tuple[str, ...]:
    """A self-attention's points: with RoPE, q and k after the rotation too (`hook_rot_q`, `hook_rot_k`)."""
    if config.positions != "rope":
        return ATTENTION_POINTS
    return (*ATTENTION_POINTS[:3], "hook_rot_q", "hook_rot_k", *ATTENTION_POINTS[3:])


def norm_points(config) -> tuple[str, ...]:
    """A norm's points (model/norm_hooks.py): a batchnorm has no per-token scale."""
    return NORM_POINTS if config.norm in ("layernorm", "rmsnorm") else NORM_POINTS[1:]


@contextmanager
def attached(model, hooks: Hooks | Iterable[tuple[str, HookFn]]) -> Iterator[Hooks]:
    """Attach hooks to every pass of `model` inside the block (training steps and generation included);
    unknown names are refused in one line; the model's earlier hooks come back after."""
    hooks = hooks if isinstance(hooks, Hooks) else Hooks(hooks)
    known = set(point_names(model.config))
    unknown = [name for name in hooks.names() if name not in known]
    if unknown:
        raise ValueError(f"hook point {unknown[0]!r} does not exist in this model (names as TransformerLens: "
                         f"blocks.0.hook_resid_pre, blocks.0.attn.hook_z, ln_final.hook_normalized...)")
    before = model.hooks
    model.hooks = hooks if before is None else before.merged(hooks)
    try:
        yield hooks
    finally:
        model.hooks = before
