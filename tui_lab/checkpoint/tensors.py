"""What safetensors and JSON can hold of a run's state: the optimizer's moments as flat tensors beside its param
groups as JSON, an RNG state as base64 text."""

from __future__ import annotations

import base64
from typing import Any

import torch


def flatten_optimizer(state_dict: dict[str, Any]) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
    """torch's {"state": {index: {name: tensor}}, "param_groups": [...]} -> flat tensors + JSON groups."""
    tensors = {}
    for index, per_param in state_dict["state"].items():
        for name, value in per_param.items():
            tensors[f"{index}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous()
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in state_dict["param_groups"]]
    return tensors, groups


def unflatten_optimizer(tensors: dict[str, torch.Tensor], groups: list[dict[str, Any]]) -> dict[str, Any]:
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        state.setdefault(int(index), {})[name] = value
    groups = [{k: (tuple(v) if k == "betas" else v) for k, v in g.items()} for g in groups]
    return {"state": state, "param_groups": groups}


def encode_bytes(t: torch.Tensor) -> str:
    """A uint8 tensor (an RNG state) as base64 text for JSON."""
    return base64.b64encode(t.cpu().numpy().tobytes()).decode("ascii")


def decode_bytes(text: str) -> torch.Tensor:
    return torch.frombuffer(bytearray(base64.b64decode(text)), dtype=torch.uint8)
