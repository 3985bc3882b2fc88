"""A pass's activations with the readouts TransformerLens's `ActivationCache` offers, on the lab's causal models.

`accumulated_resid`, `decompose_resid`, `stack_head_results`, `apply_ln_to_stack` and `logit_attrs` follow
TransformerLens's definitions (its labels too: "0_pre", "0_mid", "final_post", "embed", "pos_embed",
"0_attn_out", "0_mlp_out", "L0H1", "remainder"). `apply_ln` on a stack read at block `layer` is that block's ln1
(ln2 with `mlp_input`) with its scale frozen at the value the pass had (`hook_scale`): centred (LayerNorm) and
divided by it, gamma and beta left out. The one exception, as TransformerLens's: `accumulated_resid` of the whole
stream with `apply_ln` puts each row through the final norm itself (statistics of its own, gamma and beta), so
`lm_head` of a row is the logit lens. `logit_attrs` freezes the final norm's scale on the (raw) stack it gets and
takes the dot product with gamma * W_U[token] (less W_U[wrong]): gamma where TransformerLens's default fold_ln
puts it, so the attributions of a full decomposition add up to the logit (difference) less the norm's bias term
beta @ W_U and the output bias, exactly. W_U is not centred (TransformerLens's center_unembed moves a single
token's attribution, never a difference); the heads keep their value bias, as the lab's DLA (CONTRACTS).
Dimension legend: C components, N batch, L length, E d_model, H heads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from tui_lab.mechanism.cache import ActivationCache, require_causal
from tui_lab.mechanism.heads import output_slice
from tui_lab.mechanism.tokens import single_token
from tui_lab.model.hooks import point_names

Stack = Tensor | tuple[Tensor, list[str]]


class LabCache(ActivationCache):
    """Point name -> activation of one pass of `model` (a decoder-only language model), with its readouts;
    `codec` turns answer tokens given as text into ids."""

    def __init__(self, activations: dict[str, Tensor], model: Any, codec: Any = None) -> None:
        super().__init__(activations)
        require_causal(model.config, "cache")
        self.model, self.codec = model, codec

    @property
    def layers(self) -> int:
        return self.model.config.decoder_layers

    # -- stacks of the residual stream ------------------------------------------------------------------------
    def accumulated_resid(self, layer: int | None = None, incl_mid: bool = False, apply_ln: bool = False,
                          mlp_input: bool = False, return_labels: bool = False) -> Stack:
        """(C, N, L, E): the stream before each block up to and including block `layer`'s (None or -1: every
        block's, then the last block's output, "final_post"); `incl_mid` adds each earlier block's stream between
        its attention and its MLP, `mlp_input` block `layer`'s own (the MLP's input)."""
        layer = self._layer(layer, mlp_input)
        parts: list[tuple[str, Tensor]] = []
        for i in range(layer + 1):
            if i == self.layers:
                parts.append(("final_post", self[f"blocks.{i - 1}.hook_resid_post"]))
                break
            parts.append((f"{i}_pre", self[f"blocks.{i}.hook_resid_pre"]))
            if (incl_mid and i < layer) or (mlp_input and i == layer):
                parts.append((f"{i}_mid", self[f"blocks.{i}.hook_resid_mid"]))
        stack, labels = self._stack(parts, layer)
        if apply_ln:
            stack = self.apply_ln_to_stack(stack, layer, mlp_input, recompute_ln=layer == self.layers)
        return (stack, labels) if return_labels else stack

    def decompose_resid(self, layer: int | None = None, mode: str = "all", apply_ln: bool = False,
                        incl_embeds: bool = True, mlp_input: bool = False, return_labels: bool = False) -> Stack:
        """(C, N, L, E): what each part wrote into the stream block `layer` reads (None or -1: the final stream):
        the token and position embeddings, then each block's attention and MLP output (`mode` "attn" or "mlp":
        only those); `mlp_input`: block `layer`'s attention too. With every part they sum to that stream."""
        if mode not in ("all", "attn", "mlp"):
            raise ValueError(f"mode must be one of all, attn, mlp, not {mode!r}")
        self._require_pre("decompose_resid")
        layer = self._layer(layer, mlp_input)
        parts: list[tuple[str, Tensor]] = []
        if incl_embeds:
            parts += [(name, self[f"hook_{name}"]) for name in ("embed", "pos_embed") if f"hook_{name}" in self]
        for i in range(layer + (1 if mlp_input else 0)):
            for kind, point in (("attn", "hook_attn_out"), ("mlp", "hook_mlp_out")):
                if i == layer and kind == "mlp":
                    continue
                if mode in ("all", kind) and f"blocks.{i}.{point}" in self:  # attention-only: no mlp_out
                    parts.append((f"{i}_{kind}_out", self[f"blocks.{i}.{point}"]))
        return self._finish(parts, layer, apply_ln, mlp_input, return_labels)

    def stack_head_results(self, layer: int | None = None, apply_ln: bool = False, return_labels: bool = False,
                           incl_remainder: bool = False) -> Stack:
        """(C, N, L, E): each head's write to the stream (z_h @ W_O^h, `attn.hook_result`; from `hook_z` when the
        pass did not keep it), "L{l}H{h}", for every block before `layer` (None or -1: every block);
        `incl_remainder` adds the rest of the stream there (embeddings, output biases, MLPs), "remainder"."""
        self._require_pre("stack_head_results")
        layer = self._layer(layer)
        parts: list[tuple[str, Tensor]] = []
        for i in range(layer):
            results = self.head_results(i)
            parts += [(f"L{i}H{h}", results[:, :, h]) for h in range(results.shape[2])]
        if incl_remainder:
            total = self._stream(layer) - sum((t for _, t in parts), torch.zeros(()))
            parts.append(("remainder", total))
        return self._finish(parts, layer, apply_ln, False, return_labels)

    def head_results(self, layer: int) -> Tensor:
        """(N, L, H, E): block `layer`'s `attn.hook_result`, or computed from its `attn.hook_z` and W_O."""
        point = f"blocks.{layer}.attn.hook_result"
        if point in self:
            return self[point]
        z, block = self[f"blocks.{layer}.attn.hook_z"], self.model.decoder[layer]
        return torch.stack([z[:, :, h] @ output_slice(block, h) for h in range(z.shape[2])], dim=2)

    # -- the norm and the unembedding ------------------------------------------------------------------------
    def apply_ln_to_stack(self, stack: Tensor, layer: int | None = None, mlp_input: bool = False,
                          recompute_ln: bool = False) -> Tensor:
        """stack (C, N, L, E) as the input of block `layer`'s ln1 (ln2 with `mlp_input`; None or -1: the final
        norm), its scale frozen at this pass's value: centred (LayerNorm) and divided by it. `recompute_ln` (the
        final norm only): each row through the norm itself, its own statistics, gamma and beta (the logit lens)."""
        layer = self._layer(layer, mlp_input)
        norm = self._norm(layer, mlp_input)
        if norm is None:
            return stack
        if recompute_ln and layer == self.layers:
            return torch.stack([norm(row) for row in stack])
        if not isinstance(norm, (nn.LayerNorm, nn.RMSNorm)):
            raise ValueError(f"apply_ln: a {type(norm).__name__} has no per-token scale to freeze")
        ln = "ln2" if mlp_input else "ln1"
        scale = self["ln_final.hook_scale" if layer == self.layers else f"blocks.{layer}.{ln}.hook_scale"]
        if isinstance(norm, nn.LayerNorm):
            stack = stack - stack.mean(dim=-1, keepdim=True)
        return stack / scale

    @torch.no_grad()
    def logit_attrs(self, stack: Tensor, answer: int | str, wrong: int | str | None = None) -> Tensor:
        """(C, N, L): each component of `stack` (C, N, L, E), through the final norm with its scale frozen,
        times gamma * W_U[answer] (less W_U[wrong]): its direct share of the logit (difference) at each position."""
        return self.apply_ln_to_stack(stack) @ self.logit_direction(answer, wrong).to(stack.dtype)

    def logit_direction(self, answer: int | str, wrong: int | str | None = None) -> Tensor:
        """(E,): gamma * (W_U[answer] - W_U[wrong]) (or W_U[answer]), T5's output scale included."""
        w = self.model.lm_head.weight * self.model.out_scale
        direction = w[self._token(answer, "answer")]
        if wrong is not None:
            direction = direction - w[self._token(wrong, "wrong")]
        gamma = getattr(self.model.decoder_norm, "weight", None)
        return direction if gamma is None else direction * gamma

    # -- saving ----------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Every activation to one safetensors file, in the pass's order (each its own copy: safetensors refuses
        tensors that share memory, as resid_post and the next block's resid_pre do)."""
        tensors = {name: t.detach().cpu().clone(memory_format=torch.contiguous_format) for name, t in self.items()}
        save_file(tensors, str(path), metadata={"names": json.dumps(list(self))})

    @classmethod
    def load(cls, path: str | Path, model: Any, codec: Any = None) -> LabCache:
        """A cache `save` wrote, for `model` (its points and widths checked: one line when it is another's)."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"cache: {path} is not a file")
        try:
            tensors = load_file(str(path))
            with safe_open(str(path), "pt") as f:
                names = json.loads((f.metadata() or {}).get("names", "[]")) or list(tensors)
        except Exception as err:  # safetensors' own errors carry no common base class
            raise ValueError(f"cache: {path} is not a saved cache ({err})") from None
        known, width = set(point_names(model.config)), model.config.d_model
        for name in names:
            if name not in known:
                raise ValueError(f"cache: {path} holds {name!r}, which this model does not have")
        resid = next((n for n in names if "hook_resid" in n), None)
        if resid is not None and tensors[resid].shape[-1] != width:
            raise ValueError(f"cache: {path} has d_model {tensors[resid].shape[-1]}; this model's is {width}")
        device = next(model.parameters()).device
        return cls({name: tensors[name].to(device) for name in names}, model, codec)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _layer(self, layer: int | None, mlp_input: bool = False) -> int:
        if layer is None or layer == -1:
            layer = self.layers
        if not 0 <= layer <= self.layers:
            raise ValueError(f"layer must be in 0..{self.layers} (or None / -1: every block), got {layer}")
        if mlp_input and layer == self.layers:
            raise ValueError("mlp_input: the final stream goes to the unembedding, not an MLP; give a block's layer")
        return layer

    def _norm(self, layer: int, mlp_input: bool) -> nn.Module | None:
        if layer == self.layers:
            return self.model.decoder_norm
        block = self.model.decoder[layer]
        return block.ffn_norm if mlp_input else block.attn_norm

    def _stream(self, layer: int) -> Tensor:
        """The stream read at `layer`: block `layer`'s resid_pre, or the last block's resid_post."""
        if layer == self.layers:
            return self[f"blocks.{layer - 1}.hook_resid_post"]
        return self[f"blocks.{layer}.hook_resid_pre"]

    def _stack(self, parts: list[tuple[str, Tensor]], layer: int) -> tuple[Tensor, list[str]]:
        if not parts:
            raise ValueError(f"no components before layer {layer}")
        return torch.stack([t for _, t in parts]), [label for label, _ in parts]

    def _finish(self, parts: list[tuple[str, Tensor]], layer: int, apply_ln: bool, mlp_input: bool,
                labels: bool) -> Stack:
        stack, names = self._stack(parts, layer)
        if apply_ln:
            stack = self.apply_ln_to_stack(stack, layer, mlp_input)
        return (stack, names) if labels else stack

    def _require_pre(self, tool: str) -> None:
        if self.model.config.norm_position != "pre":
            raise ValueError(f"{tool}: a post-LN model renormalises the stream after every sublayer, so its parts do "
                             "not add up to it; this needs pre-LN (norm_position 'pre')")

    def _token(self, token: int | str, field: str) -> int:
        if isinstance(token, str):
            if self.codec is None:
                raise ValueError(f"{field}: give a token id; this cache has no tokenizer to read {token!r}")
            return single_token(self.codec, token, field)
        if not 0 <= int(token) < self.model.config.vocab:
            raise ValueError(f"{field} must be a token id in 0..{self.model.config.vocab - 1}, got {token}")
        return int(token)
