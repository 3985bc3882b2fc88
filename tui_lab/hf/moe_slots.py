"""Mixtral's sparse FFN as checkpoints store it: a router `gate` (experts x E, no bias) and per expert
SwiGLU `w1` (gate), `w3` (up), `w2` (down); ours is `ffn.router` and `ffn.experts.j.{gate,up,down}`."""

from __future__ import annotations

from tui_lab.config import ModelConfig
from tui_lab.hf.slots import Slot, linear


def mixtral_slots(c: ModelConfig, h: str, o: str) -> dict[str, Slot]:
    e, f, moe = c.d_model, c.d_ff, h + "block_sparse_moe."
    out = linear(moe + "gate", o + "ffn.router", c.experts, e, False)
    for j in range(c.experts):
        x, ours = f"{moe}experts.{j}.", f"{o}ffn.experts.{j}."
        out |= (linear(x + "w1", ours + "gate", f, e, False) | linear(x + "w3", ours + "up", f, e, False)
                | linear(x + "w2", ours + "down", e, f, False))
    return out
