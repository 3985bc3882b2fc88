"""The Transformer family: encoder-decoder (2017), decoder-only (GPT-2), encoder-only.

One module for all three; the config decides which stacks exist. Shapes are (N, L, E) everywhere.
Dimension legend: N batch, S source length, T target length, L length, E d_model, V vocab.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from tui_lab.config import ModelConfig
from tui_lab.model.attention import AttentionCapture
from tui_lab.model.batchnorm import with_keep
from tui_lab.model.blocks import DecoderBlock, EncoderBlock, dropped, make_norm
from tui_lab.model.copy import CopyGate, copy_capture
from tui_lab.model.decode_step import decode_step
from tui_lab.model.heads import make_head
from tui_lab.model.hooks import Hooks, HookScope, stack_names
from tui_lab.model.kv_cache import KVCache
from tui_lab.model.linear import Linear
from tui_lab.model.masks import key_padding
from tui_lab.model.nat import LENGTH_CLASSIFIER, LengthClassifier
from tui_lab.model.norm_hooks import hooked_norm
from tui_lab.model.patches import PatchEmbedding
from tui_lab.model.positions import ADDITIVE
from tui_lab.model.relative import share_t5_bias


@dataclass
class ModelOutput:
    logits: Tensor  # (N, L, V)
    attentions: list[AttentionCapture] = field(default_factory=list)


class Transformer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        # An image model has no token table: its "tokens" are patches (ViT).
        self.tok_embed = nn.Embedding(c.vocab, c.d_model) if c.input == "tokens" else None
        self.patch_embed = PatchEmbedding(c) if c.input == "patches" else None
        self.type_embed = nn.Embedding(c.token_types, c.d_model) if c.token_types else None  # BERT's segments
        self.embed_norm = make_norm(c) if c.embedding_norm else None  # BERT normalises the embedding sum
        self.pos_embed = ADDITIVE[c.positions](c) if c.positions in ADDITIVE else None
        self.embed_drop = nn.Dropout(c.dropout)
        self.scale = math.sqrt(c.d_model) if c.embedding_scale == "sqrt_d_model" else 1.0
        self.out_scale = c.d_model ** -0.5 if c.output_scale == "inv_sqrt_d_model" else 1.0  # T5 (tied)
        causal_encoder = False
        self.encoder = nn.ModuleList(EncoderBlock(c, causal_encoder) for _ in range(c.encoder_layers))
        self.encoder_norm = make_norm(c) if c.has_encoder and c.final_norm else None
        if c.family == "decoder-only":
            # GPT-2's block is an encoder block with a causal mask: no cross-attention.
            self.decoder = nn.ModuleList(EncoderBlock(c, causal=True) for _ in range(c.decoder_layers))
        else:
            self.decoder = nn.ModuleList(DecoderBlock(c) for _ in range(c.decoder_layers))
        self.decoder_norm = make_norm(c) if c.family != "encoder-only" and c.final_norm else None
        share_t5_bias(self.encoder, c), share_t5_bias(self.decoder, c)  # T5: one bias table per stack
        self.head = make_head(c)
        self.lm_head = Linear(c.d_model, c.vocab, bias=c.output_bias) if c.head != "classifier" else None
        # NAT (model/nat.py): the length classifier reads the encoder output; registered last so every
        # other weight draws the same numbers as before.
        self.length_classifier = LengthClassifier(c) if c.decoder_mode == LENGTH_CLASSIFIER else None
        # Built last, so every other weight draws the same numbers as without copy for a given seed.
        self.copy_gate = CopyGate(c) if c.copy else None
        self.hooks: Hooks | None = None  # set by `tui_lab.model.hooks.attached`; None: one `is None` test per block
        self.apply(_init_weights)
        if c.tie_embeddings and self.lm_head is not None:
            self.lm_head.weight = self.tok_embed.weight  # 2017 section 3.4; GPT-2 wte

    # -- pieces ------------------------------------------------------------------------------------
    def embed(self, ids: Tensor, start: int = 0, token_type_ids: Tensor | None = None,
              hooks: HookScope | None = None) -> Tensor:
        """(N, L) ids (or (N, C, I, I) pixels) -> (N, L, E): token vectors (scaled), plus segment and
        position vectors where the config has them, normalised where it says so (BERT). `hooks`: the
        stack's `hook_embed` and `hook_pos_embed` points."""
        x = (self.tok_embed(ids) if self.patch_embed is None else self.patch_embed(ids)) * self.scale
        if hooks is not None:
            x = hooks("hook_embed", x)
        if self.type_embed is not None:
            x = x + self.type_embed(token_type_ids if token_type_ids is not None else torch.zeros_like(ids))
        if self.pos_embed is not None:
            positions = self.pos_embed(start, x.shape[1])  # (L, E)
            x = x + (positions if hooks is None else hooks("hook_pos_embed", positions.expand_as(x)))
        if self.embed_norm is not None:
            x = self.embed_norm(x)
        return dropped(self.embed_drop, x)

    def encode(self, src: Tensor, src_mask: Tensor | None = None, need_weights: bool = False,
               token_type_ids: Tensor | None = None):
        """(N, S) source ids -> memory (N, S, E), plus encoder self-attention captures if asked."""
        prefix = stack_names(self.config.family)[0]
        hooks, captures = self._pass_hooks(need_weights, [(prefix, "encoder", "attn", "encoder-self")])
        x = self.embed(src, token_type_ids=token_type_ids, hooks=self._embed_scope(hooks, prefix))
        allowed = key_padding(src_mask) if src_mask is not None else None
        for i, block in enumerate(self.encoder):
            x = block(x, allowed, hooks=None if hooks is None else hooks.scope(f"{prefix}.{i}."))
        if self.encoder_norm is not None:
            norm = with_keep(self.encoder_norm, src_mask)  # batchnorm: statistics over real tokens only
            scope = "ln_final." if prefix == "blocks" else f"{prefix}.ln_final."
            x = final_norm(self.encoder_norm, norm, hooks, scope)(x)
        return (x, captures) if need_weights else x

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor | None = None,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: KVCache | None = None,
        need_weights: bool = False,
        src_ext: Tensor | None = None,
        last_only: bool = False,
    ):
        """(N, T) target ids (and the memory for encoder-decoders) -> logits (N, T, V), or (N, 1, V) for the last
        position alone with `last_only` (generation's prefill: the head skips the rows nobody samples from).

        With a cache, `tgt` holds only the new positions; they start at `cache.length`. With copy, the
        output is log P over the extended vocabulary (N, T, X) of the source's extended ids `src_ext`
        (N, S) (`tui_lab.model.copy`), and the captures end with the copy distribution.
        """
        start = cache.length if cache is not None else 0
        memory_kv, memory_allowed = self._memory(memory, src_mask, cache)
        if cache is not None and tgt.shape[1] == 1 and self._flat_step_allowed(need_weights, tgt_mask):
            step = decode_step(self, cache)
            if step is not None:
                logits = step(tgt, start, cache, memory_kv, memory_allowed)
                cache.length = start + 1
                return logits[:, None]
        prefix = stack_names(self.config.family)[1]
        kinds = [(prefix, "decoder", "attn", "decoder-self")]
        if memory_kv is not None:
            kinds.append((prefix, "decoder", "cross_attn", "cross"))
        hooks, captures = self._pass_hooks(need_weights, kinds)
        last_cross = self._last_cross(hooks, prefix) if self.copy_gate is not None else None
        hooks = last_cross[0] if last_cross is not None else hooks
        y = self.embed(tgt, start, hooks=self._embed_scope(hooks, prefix))
        allowed = key_padding(tgt_mask) if tgt_mask is not None else None
        inputs = y  # (N, T, E): p_gen reads them
        for i, block in enumerate(self.decoder):
            layer_cache = cache.layers[i] if cache is not None else None
            scope = None if hooks is None else hooks.scope(f"{prefix}.{i}.")
            if memory_kv is None:
                y = block(y, allowed, start, layer_cache, scope)
            else:
                y = block(y, memory_kv[i], allowed, memory_allowed, start, layer_cache, scope)
        if cache is not None:
            cache.length = start + tgt.shape[1]
        state = y if not (last_only and hooks is None and self.copy_gate is None) else y[:, -1:]  # (N, T, E)
        tgt_mask = tgt_mask if state.shape[1] == y.shape[1] else None  # only batchnorm reads it here
        if self.decoder_norm is not None:
            state = final_norm(self.decoder_norm, with_keep(self.decoder_norm, tgt_mask), hooks, "ln_final.")(state)
        logits = self.lm_head(state if self.out_scale == 1.0 else state * self.out_scale)
        if self.copy_gate is not None:
            logits, copy = self._copy(logits, state, inputs, last_cross[1][0], memory, src_ext)
            captures += [copy_capture(len(self.decoder) - 1, copy)] if need_weights else []
        return (logits, captures) if need_weights else logits

    def _flat_step_allowed(self, need_weights: bool, tgt_mask: Tensor | None) -> bool:
        """A cached one-token step may take the flat path (model/decode_step.py): nothing reads inside the pass."""
        return not need_weights and tgt_mask is None and self.hooks is None and not self.training

    def _embed_scope(self, hooks: Hooks | None, prefix: str) -> HookScope | None:
        """The embedding points: bare names for one stack, `encoder.` / `decoder.` before them for two."""
        if hooks is None:
            return None
        return hooks.scope("" if prefix == "blocks" else f"{prefix}.")

    def _pass_hooks(self, need_weights: bool, kinds: list[tuple[str, str, str, str]]
                    ) -> tuple[Hooks | None, list[AttentionCapture]]:
        """The attached hooks, plus (with `need_weights`) readers of every `hook_pattern` that become the
        pass's typed captures: the app's attention grids come through the same points as any other hook."""
        captures: list[AttentionCapture] = []
        if not need_weights:
            return self.hooks, captures
        readers = Hooks()
        stacks = {"encoder": len(self.encoder), "decoder": len(self.decoder)}
        for i in range(max(stacks.values())):
            for prefix, stack, attn, kind in kinds:
                if i < stacks[stack]:
                    readers.add(f"{prefix}.{i}.{attn}.hook_pattern", _recorder(captures, stack, i, kind))
        return (readers if self.hooks is None else self.hooks.merged(readers)), captures

    def _last_cross(self, hooks: Hooks | None, prefix: str) -> tuple[Hooks, list[Tensor]]:
        """The copy mechanism points with the last layer's cross-attention: a reader keeps it."""
        kept: list[Tensor] = []
        reader = Hooks([(f"{prefix}.{len(self.decoder) - 1}.cross_attn.hook_pattern",
                         lambda w, _: kept.append(w))])
        return (reader if hooks is None else hooks.merged(reader)), kept

    def _copy(self, logits: Tensor, state: Tensor, inputs: Tensor, cross: Tensor, memory: Tensor | None,
              src_ext: Tensor | None) -> tuple[Tensor, Tensor]:
        """The pointer-generator's log P over the extended vocabulary and its copy distribution (N, T, S)."""
        if memory is None or src_ext is None:
            raise ValueError("copy: a copy model needs the encoder output (memory) and the source's extended "
                             "ids (src_ext) at every decoding step")
        log_p, _, copy = self.copy_gate(logits, state, inputs, cross, memory, src_ext)
        return log_p, copy

    def _memory(self, memory: Tensor | None, src_mask: Tensor | None, cache: KVCache | None):
        """Cross-attention keys/values per layer: from the cache when it has them, else projected."""
        if self.config.family != "encoder-decoder":
            return None, None
        if cache is not None and cache.memory_kv is not None:
            return cache.memory_kv, cache.memory_allowed
        if memory is None:
            raise ValueError("an encoder-decoder needs the encoder output (memory) to decode")
        memory_kv = [block.cross.memory_kv(memory) for block in self.decoder]
        memory_allowed = key_padding(src_mask) if src_mask is not None else None
        if cache is not None:
            cache.memory_kv, cache.memory_allowed = memory_kv, memory_allowed
        return memory_kv, memory_allowed

    def project(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """An encoder-only model's last states (N, L, E) -> logits (N, L, V), or (N, classes) for a classifier."""
        if self.lm_head is None:
            return self.head(x, mask)
        return self.lm_head(self.head(x) if self.head is not None else x)

    # -- whole passes ------------------------------------------------------------------------------
    def forward(self, ids: Tensor, tgt: Tensor | None = None, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, token_type_ids: Tensor | None = None,
                src_ext: Tensor | None = None) -> Tensor:
        """Decoder-only: model(ids, tgt_mask=...) -> (N, L, V). Encoder-decoder: model(src, tgt) -> (N, T, V).
        Encoder-only: model(ids) -> (N, L, V), or (N, classes) with a classifier; ViT: model(pixels)."""
        return self.run(ids, tgt, src_mask, tgt_mask, token_type_ids=token_type_ids, src_ext=src_ext).logits

    def run(self, ids: Tensor, tgt: Tensor | None = None, src_mask: Tensor | None = None,
            tgt_mask: Tensor | None = None, need_weights: bool = False,
            token_type_ids: Tensor | None = None, src_ext: Tensor | None = None) -> ModelOutput:
        """A full pass that also returns every attention grid when `need_weights`.

        `src_ext`: the source in its extended vocabulary, for a copy model (default: `ids`, no temporary ids)."""
        c = self.config
        if c.family == "decoder-only":
            mask = tgt_mask if tgt_mask is not None else src_mask
            out = self.decode(ids, tgt_mask=mask, need_weights=need_weights)
            return ModelOutput(*out) if need_weights else ModelOutput(out)
        encoded = self.encode(ids, src_mask, need_weights, token_type_ids)
        memory, enc_captures = encoded if need_weights else (encoded, [])
        if c.family == "encoder-only":
            return ModelOutput(self.project(memory, src_mask), enc_captures)
        if tgt is None:
            raise ValueError("an encoder-decoder needs target ids: model(src_ids, tgt_ids)")
        src_ext = (ids if src_ext is None else src_ext) if c.copy else None
        out = self.decode(tgt, memory, src_mask, tgt_mask, need_weights=need_weights, src_ext=src_ext)
        return ModelOutput(out[0], enc_captures + out[1]) if need_weights else ModelOutput(out)

    def new_cache(self, batch: int, capacity: int | None = None) -> KVCache:
        p = next(self.parameters())
        return KVCache(self.config, batch, capacity or self.config.max_len, p.device, p.dtype)


def final_norm(norm: nn.Module, apply, hooks: Hooks | None, prefix: str):
    """A stack's final norm with its points (`ln_final.hook_scale`, `ln_final.hook_normalized`) when hooked."""
    return apply if hooks is None else hooked_norm(norm, apply, hooks.scope(prefix))


def _recorder(captures: list[AttentionCapture], stack: str, layer: int, kind: str):
    """A `hook_pattern` reader that keeps the weights as the typed capture the app draws."""
    return lambda weights, _: captures.append(AttentionCapture(stack, layer, kind, weights))


def _init_weights(module: nn.Module) -> None:
    """GPT-2's init (normal, std 0.02; zero biases), which also trains the toys well."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def build_model(
    config: ModelConfig, device: str | torch.device = "cpu", dtype: torch.dtype | None = None
) -> Transformer:
    """Build `config` on `device` (real weights; use device='meta' to get shapes without memory)."""
    with torch.device(device):
        model = Transformer(config)
    if dtype is not None:
        model = model.to(dtype=dtype)
    return model
