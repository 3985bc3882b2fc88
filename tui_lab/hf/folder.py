"""Where the files of a Hugging Face GPT-2 checkpoint are, in a plain folder or in the HF cache.

A path that does not exist but reads like a model id ('gpt2', 'openai-community/gpt2') is looked up
in the local cache only; nothing is downloaded here (`tui_lab.hf.hub` does that, when a person asks).

A cache root looks like `models--gpt2/{blobs,refs/main,snapshots/<hash>/}`; the files in a snapshot are
symlinks into `blobs/`. We pick the snapshot `refs/main` names when it is complete, else the newest
complete one. Nothing here imports torch or reads a weight.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

CONFIG = "config.json"
# In the order we prefer them: safetensors cannot run code; a pickle is only read with weights_only.
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
FOREIGN_WEIGHTS = ("tf_model.h5", "flax_model.msgpack", "model.ckpt.index", "rust_model.ot", "model.onnx")
# The Hub's repo id rule (huggingface_hub's REPO_ID_REGEX): an optional owner, then a name, each 1-96 of [\w.-].
REPO_ID = re.compile(r"(?:\b[\w.-]{1,96}\b/)?\b[\w.-]{1,96}\b")
EXPECTED = "config.json, model.safetensors or pytorch_model.bin, and vocab.json + merges.txt or tokenizer.json"


@dataclass(frozen=True)
class HFFiles:
    """The checkpoint folder and which of its files we read."""

    folder: Path
    name: str  # "gpt2" for a cache root models--gpt2, else the folder's name

    @property
    def config(self) -> Path:
        return self.folder / CONFIG

    @property
    def weights(self) -> Path:
        found = weights_file(self.folder)
        if found is None:
            raise ValueError(f"{self.folder} has no weights: {_weights_hint(self.folder)}")
        return found


def weights_file(folder: Path) -> Path | None:
    return next((folder / name for name in WEIGHTS if (folder / name).is_file()), None)


def find_checkpoint(path: str | Path) -> HFFiles:
    """A folder holding config.json, or a cache root `models--*` (its best snapshot), or a clear ValueError."""
    given = path
    path = Path(path).expanduser()
    if not path.exists():
        cached = cache_root(str(path))
        if cached is None:
            raise ValueError(f"--from-hf: {path} does not exist (nor is it a model in {hub_cache()})")
        path = cached
    if path.is_file():
        if not (path.parent / CONFIG).is_file():  # name the file the person gave, not the folder it sits in
            raise ValueError(f"--from-hf {given}: a file, not a model folder (a folder holding {CONFIG}) or a "
                             "model id")
        path = path.parent  # a person may point at config.json itself
    if (path / CONFIG).is_file():
        in_cache = path.resolve().parent.name == "snapshots"
        return HFFiles(path, _cache_name(path.resolve().parent.parent) if in_cache else path.name)
    if (path / "snapshots").is_dir():
        return HFFiles(_best_snapshot(path), _cache_name(path.resolve()))
    raise ValueError(f"{path} is not a GPT-2 checkpoint folder: {_not_checkpoint_hint(path)}")


def hub_cache() -> Path:
    """Where huggingface_hub keeps downloads: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()
    return cache / "huggingface" / "hub"


def is_repo_id(text: str) -> bool:
    """'gpt2', 'openai-community/gpt2': the Hub's rule (name or owner/name, [A-Za-z0-9_.-], no '--' or '..')."""
    return bool(REPO_ID.fullmatch(text)) and "--" not in text and ".." not in text


def cache_root(repo_id: str) -> Path | None:
    """'gpt2' or 'openai-community/gpt2' -> its `models--*` folder in the local cache, if it is there."""
    if not is_repo_id(repo_id):
        return None
    root = hub_cache() / f"models--{repo_id.replace('/', '--')}"
    return root if root.is_dir() else None


def cached_snapshot(repo_id: str) -> Path | None:
    """The complete snapshot of a cached model id; None when it is absent or only partly downloaded.

    The one cache lookup for model ids: `find_checkpoint` and `tui_lab.hf.hub` both come through here.
    """
    root = cache_root(repo_id)
    if root is None or not (root / "snapshots").is_dir():
        return None
    try:
        return _best_snapshot(root)
    except ValueError:  # snapshots exist but none is complete: an interrupted download
        return None


def _best_snapshot(root: Path) -> Path:
    snapshots = [p for p in (root / "snapshots").iterdir() if p.is_dir()]
    ref = root / "refs" / "main"
    if ref.is_file():
        main = root / "snapshots" / ref.read_text(encoding="utf-8").strip()
        if _complete(main):
            return main
    complete = sorted((p for p in snapshots if _complete(p)), key=lambda p: p.stat().st_mtime, reverse=True)
    if not complete:
        names = ", ".join(p.name[:12] for p in snapshots) or "none"
        raise ValueError(f"{root}: no snapshot holds both {CONFIG} and weights (snapshots: {names})")
    return complete[0]


def _complete(snapshot: Path) -> bool:
    return (snapshot / CONFIG).is_file() and weights_file(snapshot) is not None


def _cache_name(root: Path) -> str:
    """`models--openai-community--gpt2` -> 'openai-community/gpt2'."""
    return root.name.removeprefix("models--").replace("--", "/")


def _not_checkpoint_hint(path: Path) -> str:
    hub = path / "hub" if (path / "hub").is_dir() else path
    models = sorted(p.name for p in hub.glob("models--*") if p.is_dir())
    if models:
        return f"it is a Hugging Face cache; point at one model in it: {', '.join(models)}"
    return f"no {CONFIG} (expected {EXPECTED})"


def _weights_hint(folder: Path) -> str:
    foreign = [name for name in FOREIGN_WEIGHTS if (folder / name).is_file()]
    if foreign:
        return f"it holds only {', '.join(foreign)}; only model.safetensors or pytorch_model.bin are read"
    return "expected model.safetensors or pytorch_model.bin"
