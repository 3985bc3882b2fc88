"""The FFN as one matrix (seed 002's Q&A): without a nonlinearity, down(up(x)) = W_down W_up x + b'.

W' = W_down W_up is E x E with rank <= min(E, F): a d_ff below d_model is a bottleneck, and a d_ff above it buys
nothing a single E x E layer could not do. For a built model's FFNs this gives the equivalent matrix, its rank
and its effective rank (Roy & Vetterli 2007: exp of the entropy of the normalised singular values, a smooth
count of the directions that matter). Torch is imported inside the functions: `tui_lab.analysis` stays torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FFNRank:
    stack: str  # "encoder" or "decoder"
    layer: int
    d_model: int
    d_ff: int
    rank: int  # of W' = W_down W_up (numerical, torch.linalg.matrix_rank's default tolerance)
    effective_rank: float
    expert: int | None = None  # a mixture-of-experts layer: each expert is its own FFN

    @property
    def bound(self) -> int:
        return min(self.d_model, self.d_ff)

    def line(self) -> str:
        where = f"{self.stack} {self.layer}" + (f" expert {self.expert}" if self.expert is not None else "")
        return (f"{where}: W' {self.d_model}x{self.d_model}, rank {self.rank} (at most "
                f"min(E, F) = {self.bound}), effective rank {self.effective_rank:.1f}")


def equivalent_linear(ffn: Any) -> tuple[Any, Any]:
    """(W' (E, E), b' (E,) or None) with ffn(x) == x @ W'.T + b' for an FFN without activation."""
    from tui_lab.model.feed_forward import ACTIVATIONS

    if getattr(ffn, "gate", None) is not None or ffn.act is not ACTIVATIONS["none"]:
        raise ValueError("activation: only an FFN without activation ('none') is a single linear map")
    w = ffn.down.weight @ ffn.up.weight  # (E, F) @ (F, E) -> (E, E)
    b = None
    if ffn.up.bias is not None or ffn.down.bias is not None:
        b = ffn.down.weight @ ffn.up.bias if ffn.up.bias is not None else 0
        b = b + ffn.down.bias if ffn.down.bias is not None else b
    return w, b


def effective_rank(singular_values: Any) -> float:
    """exp(H(p)) with p = sigma / sum(sigma) (Roy & Vetterli 2007); 0 for a zero matrix."""
    s = singular_values.double()
    total = s.sum().item()
    if total <= 0:
        return 0.0
    p = s[s > 0] / total
    return math.exp(-(p * p.log()).sum().item())


def ffn_ranks(model: Any) -> list[FFNRank]:
    """Every FFN of a built model with activation 'none': its equivalent matrix's rank and effective rank."""
    import torch

    config = model.config
    if config.activation != "none":
        raise ValueError(f"activation ({config.activation!r}) is a nonlinearity: the FFN is not one matrix; "
                         "only activation 'none' collapses to W_down W_up")
    out = []
    with torch.no_grad():
        for stack in ("encoder", "decoder"):
            for i, block in enumerate(getattr(model, stack, None) or []):
                experts = getattr(block.ffn, "experts", None)
                for j, ffn in enumerate(experts if experts is not None else [block.ffn]):
                    w = equivalent_linear(ffn)[0].float().cpu()
                    out.append(FFNRank(stack, i, config.d_model, config.d_ff, int(torch.linalg.matrix_rank(w)),
                                       effective_rank(torch.linalg.svdvals(w)), j if experts is not None else None))
    return out
