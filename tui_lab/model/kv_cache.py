"""A KV cache with preallocated buffers, one per decoder layer (litgpt-style, with a start position).

Decoder self-attention appends one step's keys and values; cross-attention keys and values are
computed once from the encoder output and kept. Memory: 2 * layers * kv_heads * d_head * tokens * bytes
(grouped-query attention stores K = kv_heads heads, not H: that is what it is for).
"""

from __future__ import annotations

import torch
from torch import Tensor


class LayerKV:
    """Buffers (N, K, capacity, D) for one layer's self-attention keys and values."""

    def __init__(self, batch: int, heads: int, capacity: int, d_head: int, device, dtype) -> None:
        shape = (batch, heads, capacity, d_head)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)

    def append(self, k: Tensor, v: Tensor, start: int) -> tuple[Tensor, Tensor]:
        """Write k, v (N, K, L, D) at [start, start + L) and return everything up to there."""
        end = start + k.shape[-2]
        if end > self.k.shape[-2]:
            raise ValueError(f"KV cache holds {self.k.shape[-2]} tokens; asked to write up to {end}")
        self.k[:, :, start:end] = k
        self.v[:, :, start:end] = v
        return self.k[:, :, :end], self.v[:, :, :end]


class KVCache:
    """Per-layer buffers plus how many positions are filled; new positions start at `length`."""

    def __init__(self, config, batch: int, capacity: int, device=None, dtype=torch.float32) -> None:
        self.capacity = capacity
        self.length = 0
        self.layers = [
            LayerKV(batch, config.n_kv_heads, capacity, config.d_head, device, dtype)
            for _ in range(config.decoder_layers)
        ]
        self.memory_kv: list[tuple[Tensor, Tensor]] | None = None  # cross-attention, set once
        self.memory_allowed: Tensor | None = None

    def bytes(self) -> int:
        return sum(layer.k.numel() * layer.k.element_size() * 2 for layer in self.layers)

    def reorder(self, index: Tensor) -> None:
        """Keep rows `index` of the batch (beam search picks which hypotheses continue)."""
        for layer in self.layers:
            layer.k, layer.v = layer.k[index], layer.v[index]
        if self.memory_kv is not None:
            self.memory_kv = [(k[index], v[index]) for k, v in self.memory_kv]
        if self.memory_allowed is not None:
            self.memory_allowed = self.memory_allowed[index]
