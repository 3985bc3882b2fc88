"""Parameters grouped by layer, for the per-layer gradient norms the app plots."""

from __future__ import annotations

from torch import nn


def group_name(param_name: str) -> str:
    """'decoder.3.attn.qkv.weight' -> 'decoder.3'; embeddings, final norms and the head by role."""
    parts = param_name.split(".")
    if parts[0] in ("encoder", "decoder") and len(parts) > 1 and parts[1].isdigit():
        return f"{parts[0]}.{parts[1]}"
    if parts[0] in ("tok_embed", "pos_embed"):
        return "embedding"
    if parts[0].endswith("_norm"):
        return "final_norm"
    if parts[0] == "lm_head":
        return "head"
    return parts[0]


def layer_groups(model: nn.Module) -> dict[str, list[nn.Parameter]]:
    """Group name -> parameters, in model order; a tied matrix counts once (with the embedding)."""
    groups: dict[str, list[nn.Parameter]] = {}
    for name, param in model.named_parameters():  # named_parameters skips the tied duplicate
        groups.setdefault(group_name(name), []).append(param)
    return groups
