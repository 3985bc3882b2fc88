"""Where each Hugging Face tensor goes in our model: the slot tables the family modules build.

A slot names our parameter, the shape HF stores the tensor in and how to turn it into ours. Several
HF tensors may fill one parameter of ours (q, k and v fill `attn.qkv`): they are stacked along the
first dimension in the order of the table. No torch here, so the tables are plain data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    ours: str  # our parameter's name; "" for a tensor that is only checked (see zero_only)
    hf_shape: tuple[int, ...]
    conv1d: bool = False  # GPT-2's Conv1D stores (in, out): transposed
    rope_heads: int = 0  # rows are this many heads in HF's half-split RoPE layout: reorder into our pairs
    aliases: tuple[str, ...] = ()  # other names the same (tied) tensor is saved under
    zero_only: str = ""  # a tensor we have no slot for: accepted only when all zeros; says what it is
    flatten: bool = False  # stored with a leading unit dimension ours lacks (Marian's (1, V) logits bias)


def linear(hf: str, ours: str, n_out: int, n_in: int, bias: bool, rope_heads: int = 0) -> dict[str, Slot]:
    """An nn.Linear stored as HF stores it: weight (out, in), bias (out,)."""
    slots = {f"{hf}.weight": Slot(f"{ours}.weight", (n_out, n_in), rope_heads=rope_heads)}
    if bias:
        slots[f"{hf}.bias"] = Slot(f"{ours}.bias", (n_out,), rope_heads=rope_heads)
    return slots


def norm(hf: str, ours: str, e: int, bias: bool = True) -> dict[str, Slot]:
    slots = {f"{hf}.weight": Slot(f"{ours}.weight", (e,))}
    if bias:
        slots[f"{hf}.bias"] = Slot(f"{ours}.bias", (e,))
    return slots
