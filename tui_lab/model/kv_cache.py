"""A KV cache with preallocated buffers, one per decoder layer (litgpt-style, with a start position).

Decoder self-attention appends one step's keys and values; cross-attention keys and values are
computed once from the encoder output and kept. Memory: 2 * layers * kv_heads * d_head * tokens * bytes
(grouped-query attention stores K = kv_heads heads, not H: that is what it is for).
A sliding-window layer keeps only what attention can still see (`WindowKV`, Mistral's rolling buffer): the
last `window` positions plus the global tokens, so its memory stops growing at window + global_tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tui_lab.model.efficient import PerformerState


class LayerKV:
    """Buffers (N, K, capacity, D) for one layer's self-attention keys and values."""

    def __init__(self, batch: int, heads: int, capacity: int, d_head: int, device, dtype) -> None:
        shape = (batch, heads, capacity, d_head)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)
        self.cross_state: Tensor | None = None  # a guided cross-attention's last alignment (model/guided_cross.py)

    def append(self, k: Tensor, v: Tensor, start: int) -> tuple[Tensor, Tensor, Tensor | None]:
        """Write k, v (N, K, L, D) at [start, start + L) and return everything up to there (positions None:
        slot i holds position i)."""
        end = start + k.shape[-2]
        if end > self.k.shape[-2]:
            raise ValueError(f"KV cache holds {self.k.shape[-2]} tokens; asked to write up to {end}")
        # narrow, not slicing: a tuple of slices goes through Python's indexing, which on a toy's decode step
        # costs more than the copy (this runs every token)
        self.k.narrow(2, start, end - start).copy_(k)
        self.v.narrow(2, start, end - start).copy_(v)
        return self.k.narrow(2, 0, end), self.v.narrow(2, 0, end), None


class WindowKV:
    """Mistral's rolling buffer for a causal sliding-window layer: slots (N, K, G + W, D).

    The G global tokens (positions 0..G-1) keep slots 0..G-1; position p >= G goes to slot G + (p - G) % W,
    overwriting p - W, which no later query can see (query q sees q-W+1..q and the globals). `pos` holds each
    slot's absolute position (-1: empty), so RoPE stays by position (applied before caching) and the
    mask is built from positions, not slots. Fewer slots than G + W when the run is shorter (`capacity`).
    """

    def __init__(self, batch: int, heads: int, capacity: int, d_head: int, device, dtype, window: int,
                 sinks: int) -> None:
        slots = min(capacity, window + sinks)
        self.window, self.sinks = window, sinks
        self.limit = None if slots == window + sinks else slots  # a full ring rolls forever
        self.k = torch.zeros((batch, heads, slots, d_head), device=device, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        self.pos = torch.full((slots,), -1, dtype=torch.long, device=device)
        self.cross_state: Tensor | None = None  # as LayerKV's

    def _slots(self, positions: Tensor) -> Tensor:
        return torch.where(positions < self.sinks, positions, self.sinks + (positions - self.sinks) % self.window)

    def append(self, k: Tensor, v: Tensor, start: int) -> tuple[Tensor, Tensor, Tensor]:
        """Store k, v (N, K, L, D) of positions start..start+L-1; return the keys, values and positions
        attention needs: the ring itself for one new token, else the ring before the write plus all L new
        ones (an early query of a long chunk needs keys the chunk's own end evicts)."""
        length, end = k.shape[-2], start + k.shape[-2]
        if self.limit is not None and end > self.limit:
            raise ValueError(f"KV cache holds {self.limit} tokens; asked to write up to {end}")
        if length == 1:  # a decode step: plain slot arithmetic, no index tensors (this runs every token)
            slot = start if start < self.sinks else self.sinks + (start - self.sinks) % self.window
            self.k[:, :, slot], self.v[:, :, slot], self.pos[slot] = k[:, :, 0], v[:, :, 0], start
            return self.k, self.v, self.pos
        new_pos = torch.arange(start, end, device=self.pos.device)
        out = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2), torch.cat([self.pos, new_pos])
        keep = (new_pos < self.sinks) | (new_pos >= end - self.window)  # what later queries can still see
        slots = self._slots(new_pos[keep])
        self.k.index_copy_(2, slots, k[:, :, keep])
        self.v.index_copy_(2, slots, v[:, :, keep])
        self.pos[slots] = new_pos[keep]
        return out


class KVCache:
    """Per-layer buffers plus how many positions are filled; new positions start at `length`."""

    def __init__(self, config, batch: int, capacity: int, device=None, dtype=torch.float32) -> None:
        self.capacity = capacity
        self.length = 0
        self.layers = [_layer_kv(config, batch, capacity, device, dtype) for _ in range(config.decoder_layers)]
        self.memory_kv: list[tuple[Tensor, Tensor]] | None = None  # cross-attention, set once
        self.memory_allowed: Tensor | None = None
        self.step = False  # the flat one-token step (model/decode_step.py), built at the first step; None: none

    def bytes(self) -> int:
        return sum((layer.k.numel() + layer.v.numel()) * layer.k.element_size() for layer in self.layers)

    def reorder(self, index: Tensor) -> None:
        """Keep rows `index` of the batch (beam search picks which hypotheses continue)."""
        for layer in self.layers:  # every row of a WindowKV holds the same positions: `pos` needs no reorder
            layer.k, layer.v = layer.k[index], layer.v[index]
            if layer.cross_state is not None:
                layer.cross_state = layer.cross_state[index]
        if self.memory_kv is not None:
            self.memory_kv = [(k[index], v[index]) for k, v in self.memory_kv]
        if self.memory_allowed is not None:
            self.memory_allowed = self.memory_allowed[index]


def _layer_kv(config, batch: int, capacity: int, device, dtype) -> LayerKV | WindowKV | PerformerState:
    """A rolling buffer for a sliding-window decoder (always causal), Performer's running sums, else every position."""
    if config.self_attention == "performer":
        return PerformerState(batch, config.heads, config.n_features, config.d_head, device, dtype)
    args = (batch, config.n_kv_heads, capacity, config.d_head, device, dtype)
    if config.attention_window:
        return WindowKV(*args, config.attention_window, config.global_tokens)
    return LayerKV(*args)
