"""Position schemes: sinusoidal (2017, section 3.5), learned (GPT-2), RoPE and ALiBi.

Sinusoidal and learned vectors are added to the embeddings; RoPE rotates q and k inside attention;
ALiBi adds a distance penalty to the scores. Only `learned` has parameters, and only it has a hard
`max_len`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_table(length: int, d_model: int) -> Tensor:
    """(L, E): PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = pos * torch.exp(-math.log(10000.0) * i2 / d_model)
    pe = torch.zeros(length, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


def sinusoidal_halves_table(length: int, d_model: int) -> Tensor:
    """(L, E): the same angles as `sinusoidal_table`, all sines first then all cosines (Marian, fairseq)."""
    pe = sinusoidal_table(length, d_model)
    return torch.cat([pe[:, 0::2], pe[:, 1::2]], dim=-1)


def rope_angles(dim: int, positions: Tensor, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    """cos and sin of each position's rotation, each (L, dim/2)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=positions.device).float() / dim))
    angles = torch.outer(positions.float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate each adjacent pair (x[2i], x[2i+1]) of x (..., L, D) by its position's angle."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def rope_full_tables(cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    """`rope_angles`' (L, D/2) tables laid out per feature (L, D): cos twice per pair, sin as (-sin, sin)."""
    return cos.repeat_interleave(2, dim=-1), torch.stack([-sin, sin], dim=-1).flatten(-2)


def rope_turns(cos: Tensor, sin: Tensor) -> Tensor:
    """`rope_angles`' (L, D/2) tables as one complex number per pair, cos + i sin: turning the pair (a, b), read
    as a + ib, is multiplying it by that number."""
    return torch.complex(cos, sin)


def apply_rope_full(x: Tensor, cos2: Tensor, sin2: Tensor, turns: Tensor | None = None) -> Tensor:
    """`apply_rope` with `rope_full_tables`' tables: x * cos2 + (each pair swapped) * sin2, bit for bit the same
    numbers ((-a) * b is -(a * b) and p + (-r) is p - r exactly) in fewer passes over x, and none strided on both
    sides; the training pass turns q and k in one call this way (model/attention.py).
    With `turns` (`rope_turns`, laid out as cos2) and pairs that fill whole vectors (`_pairs_as_complex`), each
    pair is multiplied as a complex number instead: one pass each way where the real form takes four, the same
    bits again (ATen's vectorised complex product is two rounded products and one sum, as the real form's)."""
    if turns is not None and _pairs_as_complex(x):
        turns = turns.to(torch.complex64)
        if torch.is_grad_enabled() and x.requires_grad:
            return _TurnComplex.apply(x, turns)
        return _turn(x, turns)
    cos2, sin2 = cos2.to(x.dtype), sin2.to(x.dtype)
    if torch.is_grad_enabled() and x.requires_grad:
        return _TurnPairs.apply(x, cos2, sin2)
    return x * cos2 + _swap_pairs(x) * sin2


def _pairs_as_complex(x: Tensor) -> bool:
    """x can be read as complex pairs, and their product is vectorised with no tail: float32 on a CPU, the last
    dim contiguous and D/2 a multiple of 8 (AVX-512 holds 8 complex numbers, AVX2 4). A scalar tail's product may be
    fused (one rounding, not the real form's two), so such shapes keep the real form (tests: every D that is a
    multiple of 16 agrees bit for bit on the avx512, avx2 and default ATen builds)."""
    return (x.device.type == "cpu" and x.dtype == torch.float32 and x.shape[-1] % 16 == 0 and x.stride(-1) == 1
            and x.storage_offset() % 2 == 0 and all(s % 2 == 0 for s in x.stride()[:-1]))


def _turn(x: Tensor, turns: Tensor) -> Tensor:
    """x (..., D) with each pair (x[2i], x[2i+1]) multiplied by turns[..., i] as a complex number; a new tensor."""
    return torch.view_as_real(torch.view_as_complex(x.unflatten(-1, (-1, 2))) * turns).flatten(-2)


class _TurnComplex(torch.autograd.Function):
    """`_turn` in training: the gradient of a product by a unit complex number is the product by its conjugate
    (the real form's grad * cos2 plus the swapped grad * sin2, the same bits), one fresh buffer each way."""

    @staticmethod
    def forward(ctx, x: Tensor, turns: Tensor) -> Tensor:
        ctx.save_for_backward(turns)
        return _turn(x, turns)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (turns,) = ctx.saved_tensors
        grad = grad if _pairs_as_complex(grad) else grad.contiguous()
        return _turn(grad, turns.conj()), None


def _swap_pairs(x: Tensor) -> Tensor:
    """(..., D) with each pair (x[2i], x[2i+1]) swapped; a copy."""
    return torch.stack([x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)


class _TurnPairs(torch.autograd.Function):
    """`apply_rope_full` in training: the numbers autograd gives, bit for bit (the swap is its own transpose, and
    each gradient is grad * cos2 plus the swapped grad * sin2), with two fresh buffers where autograd's chain of
    slices, stack, products and sum makes eight."""

    @staticmethod
    def forward(ctx, x: Tensor, cos2: Tensor, sin2: Tensor) -> Tensor:
        ctx.save_for_backward(cos2, sin2)
        return (x * cos2).add_(_swap_pairs(x).mul_(sin2))

    @staticmethod
    def backward(ctx, grad: Tensor):
        cos2, sin2 = ctx.saved_tensors
        return (grad * cos2).add_(_swap_pairs(grad * sin2)), None, None


def alibi_slopes(heads: int) -> Tensor:
    """Press et al. 2022: a geometric sequence 2^(-8/H), 2^(-16/H), ... (interleaved past a power of 2)."""
    def power_of_two(n: int) -> list[float]:
        start = 2 ** (-8 / n)
        return [start ** (i + 1) for i in range(n)]

    if math.log2(heads).is_integer():
        return torch.tensor(power_of_two(heads))
    closest = 2 ** math.floor(math.log2(heads))
    extra = power_of_two(2 * closest)[0::2][: heads - closest]
    return torch.tensor(power_of_two(closest) + extra)


def alibi_bias(heads: int, q_pos: Tensor, k_pos: Tensor, causal: bool) -> Tensor:
    """(H, Lq, Lk) additive score bias, -slope * distance."""
    distance = (q_pos[:, None] - k_pos[None, :]).float()
    distance = distance.clamp(min=0) if causal else distance.abs()
    return -alibi_slopes(heads).to(q_pos.device)[:, None, None] * distance


class SinusoidalPositions(nn.Module):
    """No parameters; the table grows on demand, so any length works."""

    def __init__(self, d_model: int, length: int, table=sinusoidal_table) -> None:
        super().__init__()
        self.d_model, self.make_table = d_model, table
        self.register_buffer("table", table(length, d_model), persistent=False)

    def forward(self, start: int, length: int) -> Tensor:
        """(length, E) vectors of positions start .. start + length - 1."""
        needed = start + length
        if needed > self.table.shape[0]:
            with torch.inference_mode(False), torch.no_grad():  # usable by training after generation grew it
                self.table = self.make_table(max(needed, 2 * self.table.shape[0]), self.d_model).to(self.table)
        return self.table[start:needed]


class LearnedPositions(nn.Module):
    """A (max_len, E) table, trained; positions past max_len have no row."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, std=0.01)

    def forward(self, start: int, length: int) -> Tensor:
        """(length, E) rows start .. start + length - 1; plain ints, so no device sync per step."""
        if start + length > self.max_len:
            raise ValueError(f"position {start + length - 1} is past max_len ({self.max_len}) of learned positions")
        return self.weight[start : start + length]


# Which schemes add a vector to the embeddings; RoPE and ALiBi act inside attention instead.
ADDITIVE = {
    "sinusoidal": lambda c: SinusoidalPositions(c.d_model, c.max_len),
    "learned": lambda c: LearnedPositions(c.max_len, c.d_model),
    "sinusoidal_halves": lambda c: SinusoidalPositions(c.d_model, c.max_len, sinusoidal_halves_table),
}
