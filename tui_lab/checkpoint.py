"""Checkpoints: one folder of safetensors and JSON (never pickle), written atomically.

Layout: `config.json` (the ModelConfig), `model.safetensors`, `tokenizer/`, `meta.json`, and for a
resumable run `optimizer.safetensors` (AdamW's moments) plus `train_state.json` (step, schedule, RNG
states, the optimizer's param groups, the TrainConfig).

Atomic: everything is written into a hidden temporary folder beside the target, which then replaces the
target by rename, so a crash while writing leaves the previous checkpoint as it was.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, load_model, save_file, save_model

from tui_lab.config import ModelConfig

REQUIRED = ("config.json", "model.safetensors", "tokenizer")


@dataclass
class Checkpoint:
    config: ModelConfig
    model: Any  # tui_lab.model.Transformer
    tokenizer: Any  # tui_lab.data.tokenizers.Tokenizer
    step: int
    train_state: dict[str, Any] | None = None  # includes "optimizer": a torch optimizer state_dict
    meta: dict[str, Any] = field(default_factory=dict)


def save_checkpoint(folder: str | Path, model, tokenizer, train_state: dict[str, Any] | None = None,
                    meta: dict[str, Any] | None = None) -> Path:
    """Write a checkpoint folder atomically; returns its path."""
    folder = Path(folder)
    if folder.exists() and not is_checkpoint(folder) and any(folder.iterdir()):
        raise ValueError(f"out folder ({folder}) exists and is not a checkpoint; pick an empty or new folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(folder)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        _write(tmp, model, tokenizer, train_state, meta or {})
        _swap_in(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _write(tmp: Path, model, tokenizer, train_state: dict[str, Any] | None, meta: dict[str, Any]) -> None:
    _write_json(tmp / "config.json", model.config.to_dict())
    save_model(model, str(tmp / "model.safetensors"))  # handles the tied embedding / output matrix
    tokenizer.save(tmp / "tokenizer")
    _write_json(tmp / "meta.json", meta)
    if train_state is not None:
        _write_train_state(tmp, train_state)


def _write_train_state(tmp: Path, train_state: dict[str, Any]) -> None:
    state = dict(train_state)
    optimizer = state.pop("optimizer", None)
    if optimizer is not None:
        tensors, groups = _flatten_optimizer(optimizer)
        save_file(tensors, str(tmp / "optimizer.safetensors"))
        state["optimizer_param_groups"] = groups
    _write_json(tmp / "train_state.json", state)


def _swap_in(tmp: Path, folder: Path) -> None:
    """Replace `folder` by `tmp`; the old folder is moved aside first and removed last."""
    if not folder.exists():
        tmp.rename(folder)
        return
    old = folder.parent / f".{folder.name}.old-{uuid.uuid4().hex[:8]}"
    folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def _remove_leftovers(folder: Path) -> None:
    """Temporary folders of writes that crashed; an old copy is put back if the target went missing."""
    _recover(folder)
    for stale in folder.parent.glob(f".{folder.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for stale in folder.parent.glob(f".{folder.name}.old-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _recover(folder: Path) -> None:
    """A crash between the two renames of `_swap_in` leaves only the old copy: bring it back."""
    if folder.exists():
        return
    olds = sorted(folder.parent.glob(f".{folder.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds:
        olds[-1].rename(folder)


def is_checkpoint(folder: str | Path) -> bool:
    folder = Path(folder)
    return all((folder / name).exists() for name in REQUIRED)


def load_checkpoint(folder: str | Path, device: str = "cpu") -> Checkpoint:
    """The model (on `device`), tokenizer and training state of a checkpoint folder."""
    from tui_lab.data.tokenizers import load_tokenizer
    from tui_lab.model import build_model

    folder = Path(folder)
    _recover(folder)
    if not folder.is_dir():
        raise ValueError(f"checkpoint folder ({folder}) does not exist")
    missing = [name for name in REQUIRED if not (folder / name).exists()]
    if missing:
        raise ValueError(f"{folder} is not a checkpoint: it lacks {', '.join(missing)}")
    config = ModelConfig(**_read_json(folder / "config.json"))
    model = build_model(config, device=device)
    load_model(model, str(folder / "model.safetensors"), device=str(device))
    train_state = _read_train_state(folder)
    meta = _read_json(folder / "meta.json") if (folder / "meta.json").exists() else {}
    step = int((train_state or meta).get("step", 0))
    return Checkpoint(config, model, load_tokenizer(folder / "tokenizer"), step, train_state, meta)


def _read_train_state(folder: Path) -> dict[str, Any] | None:
    path = folder / "train_state.json"
    if not path.exists():
        return None
    state = _read_json(path)
    groups = state.pop("optimizer_param_groups", None)
    if groups is not None:
        state["optimizer"] = _unflatten_optimizer(load_file(str(folder / "optimizer.safetensors")), groups)
    return state


def _flatten_optimizer(state_dict: dict[str, Any]) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
    """torch's {"state": {index: {name: tensor}}, "param_groups": [...]} -> flat tensors + JSON groups."""
    tensors = {}
    for index, per_param in state_dict["state"].items():
        for name, value in per_param.items():
            tensors[f"{index}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous()
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in state_dict["param_groups"]]
    return tensors, groups


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], groups: list[dict[str, Any]]) -> dict[str, Any]:
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


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not readable JSON: {err}") from None
