"""Reading a checkpoint folder as untrusted input: every file checked against the others before anything big is
allocated, whatever is wrong one ValueError naming the file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, load_model

from tui_lab.checkpoint.swap import settle
from tui_lab.checkpoint.tensors import unflatten_optimizer
from tui_lab.checkpoint_files import REQUIRED, UNFINISHED
from tui_lab.config import ModelConfig, field_names


@dataclass
class Checkpoint:
    config: ModelConfig
    model: Any  # tui_lab.model.Transformer
    tokenizer: Any  # tui_lab.data.tokenizers.Tokenizer
    step: int
    train_state: dict[str, Any] | None = None  # includes "optimizer": a torch optimizer state_dict
    meta: dict[str, Any] = field(default_factory=dict)


def load_checkpoint(folder: str | Path, device: str = "cpu") -> Checkpoint:
    """The model (on `device`), tokenizer and training state of a checkpoint folder.

    A checkpoint is untrusted input: every file is checked against the others before anything big is
    allocated (the weights' names and shapes against config.json, on the meta device), and whatever is
    wrong is one ValueError naming the file.
    """
    from tui_lab.model import build_model

    folder = Path(folder)
    _refuse_unfinished(folder)
    settle(folder)
    if not folder.is_dir():
        raise ValueError(f"checkpoint folder ({folder}) does not exist")
    missing = [name for name in REQUIRED if not (folder / name).exists()]
    if missing:
        raise ValueError(f"{folder} is not a checkpoint: it lacks {', '.join(missing)}")
    config = _read_config(folder / "config.json")
    _check_weights(folder / "model.safetensors", config)
    tokenizer = _read_tokenizer(folder / "tokenizer", config)
    train_state = _read_train_state(folder)
    meta = _read_object(folder / "meta.json") if (folder / "meta.json").exists() else {}
    model = build_model(config, device=device)
    try:
        load_model(model, str(folder / "model.safetensors"), device=str(device))
    except Exception as err:  # noqa: BLE001 - safetensors and torch raise their own types
        raise ValueError(f"{folder / 'model.safetensors'}: {_first_line(err)}") from None
    return Checkpoint(config, model, tokenizer, _step(folder, train_state, meta), train_state, meta)


def _refuse_unfinished(folder: Path) -> None:
    """save_checkpoint's temporary folder (a write in progress or crashed) is not a checkpoint yet."""
    match = UNFINISHED.match(folder.name)
    if match:
        what = "being written" if match["kind"] == "tmp" else "being replaced"
        raise ValueError(f"{folder} is a checkpoint {what} by save_checkpoint; load "
                         f"{folder.parent / match['name']} once the save has finished")


def _read_config(path: Path) -> ModelConfig:
    data = _read_object(path)
    unknown = sorted(set(data) - set(field_names()))
    if unknown:
        raise ValueError(f"{path}: unknown field {unknown[0]!r}")
    try:
        return ModelConfig(**data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def _check_weights(path: Path, config: ModelConfig) -> None:
    """The file's tensor names and shapes are the ones `config` builds (read from the header only)."""
    from tui_lab.model import build_model

    try:
        with safe_open(str(path), framework="pt") as weights:
            stored = {name: tuple(weights.get_slice(name).get_shape()) for name in weights.keys()}
    except Exception as err:  # noqa: BLE001 - SafetensorError (truncated, not safetensors) or OSError
        raise ValueError(f"{path} cannot be read as safetensors: {_first_line(err)}") from None
    with _MetaValuesSkipped():
        tensors = build_model(config, device="meta").state_dict(keep_vars=True)
    expected = {name: tuple(t.shape) for name, t in tensors.items()}
    extra = sorted(set(stored) - set(expected))
    if extra:
        raise ValueError(f"{path} holds {len(extra)} tensor(s) the config has no place for: {_names(extra)}")
    for name, shape in stored.items():
        if shape != expected[name]:
            raise ValueError(f"{path}: {name} has shape {list(shape)} but config.json needs {list(expected[name])}")
    # A tied matrix is stored once under one of its names (safetensors drops the alias).
    present = {id(tensors[name]) for name in stored}
    lacking = sorted(name for name, t in tensors.items() if name not in stored and id(t) not in present)
    if lacking:
        raise ValueError(f"{path} lacks {len(lacking)} tensor(s) config.json needs: {_names(lacking)}")


class _MetaValuesSkipped(torch.overrides.TorchFunctionMode):
    """Drawing random values into a meta tensor, which holds none, does nothing. Torch draws them through its
    Python meta kernel for `normal_`, whose first call imports torch._dynamo: ~1 s of CPU in every process that
    loads a checkpoint (an app launch, beside a busy CPU, waited ~2 s for it). Thread-local, as every mode is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensor = args[0] if args else kwargs.get("tensor")  # nn.init passes it by name
        if func in (torch.nn.init.normal_, torch.Tensor.normal_) and tensor is not None and tensor.is_meta:
            return tensor
        return func(*args, **kwargs)


def _read_tokenizer(folder: Path, config: ModelConfig):
    from tui_lab.data.tokenizers import load_tokenizer

    if (folder / "tokenizer_meta.json").is_file():
        _read_object(folder / "tokenizer_meta.json")  # its JSON errors, named, before the tokenizer's own
    try:
        tokenizer = load_tokenizer(folder)
    except KeyError as err:
        raise ValueError(f"{folder / 'tokenizer_meta.json'} lacks {err}") from None
    except (ValueError, TypeError, AttributeError) as err:  # a meta file of the wrong shape
        message = _first_line(err).removeprefix("tokenizer: ")
        raise ValueError(message if str(folder) in message else f"{folder}: {message}") from None
    if tokenizer.vocab_size > config.vocab:  # ids past the embedding would fail at the first forward
        raise ValueError(f"{folder} has {tokenizer.vocab_size} tokens but config.json's vocab is {config.vocab}")
    return tokenizer


def _step(folder: Path, train_state: dict[str, Any] | None, meta: dict[str, Any]) -> int:
    source, name = (train_state, "train_state.json") if train_state else (meta, "meta.json")
    step = source.get("step", 0)
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"{folder / name}: step ({step!r}) must be an integer >= 0")
    return step


def _read_train_state(folder: Path) -> dict[str, Any] | None:
    path = folder / "train_state.json"
    if not path.exists():
        return None
    state = _read_object(path)
    groups = state.pop("optimizer_param_groups", None)
    if groups is not None:
        tensors = folder / "optimizer.safetensors"
        try:
            state["optimizer"] = unflatten_optimizer(load_file(str(tensors)), groups)
        except Exception as err:  # noqa: BLE001 - missing, truncated or of the wrong layout
            raise ValueError(f"{tensors} cannot be read with {path.name}'s param groups: {_first_line(err)}") from None
    return state


def _names(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not readable JSON: {_first_line(err)}") from None


def _read_object(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
    return data
