"""Writing a checkpoint: its entries into a temporary folder, then moved in (swap.py); a write the disk refuses
is one line naming the folder, the reason and the space it needs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import save_file, save_model

from tui_lab.analysis.format import fmt_bytes
from tui_lab.checkpoint.swap import move_in, settle, temp_folder
from tui_lab.checkpoint.tensors import flatten_optimizer
from tui_lab.checkpoint_files import save_target


class SaveError(ValueError):
    """A checkpoint could not be written (disk full, no permission...): one line naming the folder, the reason and
    the space it needs. The previous checkpoint, if any, is untouched (the write is atomic)."""

    def __init__(self, folder: Path, reason: str, needed: int) -> None:
        free = _free_bytes(folder)
        room = f", {fmt_bytes(free)} free there" if free is not None else ""
        super().__init__(f"could not save to {folder}: {reason} (a checkpoint needs about {fmt_bytes(needed)}{room})")
        self.folder, self.reason, self.needed = folder, reason, needed


class SaveRefused(SaveError):
    """The folder would lose something a checkpoint is not made of, or is a file (`save_target`'s one line);
    nothing was written. A SaveError, so a trainer rescues its run as it does from a full disk."""

    def __init__(self, folder: Path, reason: str) -> None:
        ValueError.__init__(self, reason)
        self.folder, self.reason, self.needed = folder, reason, 0


def save_checkpoint(folder: str | Path, model, tokenizer, train_state: dict[str, Any] | None = None,
                    meta: dict[str, Any] | None = None) -> Path:
    """Write a checkpoint into `folder` atomically, keeping whatever else it holds; returns `folder`.

    A folder that is a file, holds things but no checkpoint, or whose checkpoint entries hold something else is
    one ValueError line (nothing written); a write the disk refuses is one `SaveError` line."""
    folder = Path(folder)
    try:
        real = save_target(folder)
    except ValueError as err:
        raise SaveRefused(folder, str(err)) from None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        settle(real)
        with temp_folder(real) as tmp:
            _write(tmp, model, tokenizer, train_state, meta or {})
            move_in(tmp, real)
    except (OSError, SafetensorError) as err:  # the disk, not the caller: one line; the old checkpoint stands
        reason = _io_reason(err)
        if reason is None:
            raise
        raise SaveError(folder, reason, checkpoint_bytes(model, train_state)) from None
    return folder


def _io_reason(err: Exception) -> str | None:
    """The operating system's reason for a failed write; safetensors wraps it in its own error's text."""
    if isinstance(err, OSError):
        return err.strerror or str(err)
    found = re.search(r"I/O error: (.*?) \(os error \d+\)", str(err))
    return found.group(1) if found else None


def checkpoint_bytes(model, train_state: dict[str, Any] | None = None) -> int:
    """What a checkpoint of `model` takes on disk, about: its tensors and the optimizer's (tokenizer and JSON
    are small beside them)."""
    tensors = {id(t): t.numel() * t.element_size() for t in model.state_dict().values()}
    optimizer = (train_state or {}).get("optimizer") or {}
    moments = sum(t.numel() * t.element_size() for state in optimizer.get("state", {}).values()
                  for t in state.values() if torch.is_tensor(t))
    return sum(tensors.values()) + moments + 64 * 1024


def _free_bytes(folder: Path) -> int | None:
    """Free bytes on the file system `folder` would live on (its nearest existing parent)."""
    for place in (folder, *folder.absolute().parents):
        if place.exists():
            try:
                return shutil.disk_usage(place).free
            except OSError:
                return None
    return None


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
        tensors, groups = flatten_optimizer(optimizer)
        save_file(tensors, str(tmp / "optimizer.safetensors"))
        state["optimizer_param_groups"] = groups
    _write_json(tmp / "train_state.json", state)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
