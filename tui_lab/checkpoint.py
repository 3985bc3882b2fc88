"""Checkpoints: one folder of safetensors and JSON (never pickle), written atomically.

Layout: `config.json` (the ModelConfig), `model.safetensors`, `tokenizer/`, `meta.json`, and for a
resumable run `optimizer.safetensors` (AdamW's moments) plus `train_state.json` (step, schedule, RNG
states, the optimizer's param groups, the TrainConfig): the list `tui_lab.checkpoint_files.CHECKPOINT_FILES`.

A save replaces only those entries: anything else in the folder stays (checkpoint_files.py says which folders
are refused instead). It writes the new entries into a hidden temporary folder beside the target first, so a
crash while writing leaves the previous checkpoint as it was; then it moves the old entries aside and the new
ones in. A crash during those moves is finished at the next save, load or `train` of the folder (`settle`):
the new entries were whole before the first move. A link to a folder is written through, and stays a link.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, load_model, save_file, save_model

from tui_lab.analysis.format import fmt_bytes
from tui_lab.checkpoint_files import CHECKPOINT_FILES, REQUIRED, UNFINISHED, is_checkpoint, save_target
from tui_lab.config import ModelConfig, field_names

__all__ = ["CHECKPOINT_FILES", "REQUIRED", "Checkpoint", "SaveError", "is_checkpoint", "load_checkpoint",
           "save_checkpoint", "SaveRefused", "settle"]


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
        with _temp_folder(real) as tmp:
            _write(tmp, model, tokenizer, train_state, meta or {})
            _move_in(tmp, real)
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
        tensors, groups = _flatten_optimizer(optimizer)
        save_file(tensors, str(tmp / "optimizer.safetensors"))
        state["optimizer_param_groups"] = groups
    _write_json(tmp / "train_state.json", state)


@contextmanager
def _temp_folder(real: Path) -> Iterator[Path]:
    """A new `.NAME.tmp-KEY` beside `real`, flocked while this save writes it, so that `settle` in another
    process can tell a live write from a crashed one (the kernel drops the lock however the writer ends)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.tmp-", dir=real.parent))
    # A settle in another process that opens it before this lock (microseconds) finds it empty and removes it: this
    # save then fails in one line, and nothing else is lost.
    fd = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield tmp
    except BaseException:
        if not _old_of(tmp).exists():  # still writing: the old checkpoint stands, the half-written one goes
            shutil.rmtree(tmp, ignore_errors=True)
        raise  # mid-move: the new entries are whole, and the next settle finishes moving them in
    finally:
        os.close(fd)


def _old_of(tmp: Path) -> Path:
    return tmp.with_name(tmp.name.replace(".tmp-", ".old-", 1))


def _move_in(tmp: Path, real: Path) -> None:
    """Put the finished entries in `tmp` into `real`: a new folder by one rename, an existing one entry by entry
    (its own checkpoint entries moved aside first, everything else left where it is)."""
    if not os.path.lexists(real):
        tmp.rename(real)
        return
    old = _old_of(tmp)
    old.mkdir()  # from here on the new entries are whole: a crash is finished forward, never undone
    _finish(tmp, real, old)


def _finish(tmp: Path, real: Path, old: Path) -> None:
    # config.json moves in first: while it is still in `tmp`, none of the new entries is in `real` yet, so every
    # checkpoint entry there is an old one (a crash before this line leaves some of them still to move aside).
    if (tmp / "config.json").exists():
        for name in CHECKPOINT_FILES:
            if os.path.lexists(real / name):
                (real / name).rename(old / name)
    real.mkdir(parents=True, exist_ok=True)
    for name in sorted(os.listdir(tmp), key=lambda name: name != "config.json"):
        if name in CHECKPOINT_FILES:  # a save writes nothing else; a rename never replaces any other entry
            (tmp / name).rename(real / name)
    shutil.rmtree(tmp)
    shutil.rmtree(old, ignore_errors=True)


def settle(folder: str | Path) -> None:
    """Finish or drop what crashed saves left beside `folder`: moves cut short are finished, half-written
    temporary folders removed. Only the save's own `.NAME.tmp-KEY` / `.NAME.old-KEY` folders are touched, and
    none a live save is writing (its flock). A checkpoint left aside by a crash of an older version's whole-folder
    swap is put back."""
    try:
        real = Path(folder).resolve()
        entries = list(os.scandir(real.parent))
    except (OSError, RuntimeError):  # no such parent, not readable, a loop of links: nothing of ours to settle
        return
    leftovers = {}
    for entry in entries:
        match = UNFINISHED.match(entry.name)
        if match and match["name"] == real.name and entry.is_dir(follow_symlinks=False):
            leftovers[(match["kind"], match["key"])] = Path(entry.path)
    _put_back(real, [path for (kind, key), path in leftovers.items() if kind == "old" and ("tmp", key) not in
                     leftovers])
    for (kind, key), path in leftovers.items():
        if kind == "tmp":
            _settle_one(path, real, leftovers.get(("old", key)))
        elif ("tmp", key) not in leftovers:
            shutil.rmtree(path, ignore_errors=True)  # the moves were done; only the replaced entries were left


def _settle_one(tmp: Path, real: Path, old: Path | None) -> None:
    try:
        fd = os.open(tmp, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return  # a live save is writing it
    try:
        if old is None:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            _finish(tmp, real, old)
    except OSError:
        pass  # a read-only place, the folder gone: left as it is for a later settle, the load goes on
    finally:
        os.close(fd)


def _put_back(real: Path, olds: list[Path]) -> None:
    """Before entry-wise saves, a save renamed the whole folder aside and the new one in: a crash between the two
    renames left only the old copy."""
    if os.path.lexists(real) or not olds:
        return
    newest = max(olds, key=lambda p: p.stat().st_mtime)
    if is_checkpoint(newest):
        try:
            newest.rename(real)
        except OSError:
            pass  # the load then says the folder does not exist


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
            state["optimizer"] = _unflatten_optimizer(load_file(str(tensors)), groups)
        except Exception as err:  # noqa: BLE001 - missing, truncated or of the wrong layout
            raise ValueError(f"{tensors} cannot be read with {path.name}'s param groups: {_first_line(err)}") from None
    return state


def _names(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not readable JSON: {_first_line(err)}") from None


def _read_object(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
    return data
