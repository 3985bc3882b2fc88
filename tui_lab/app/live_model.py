"""The ONE live model every view reads: config, device, model, tokenizer, and a generation counter.

Building happens in a thread worker (torch is imported there, never on the UI's import path). The
worker only posts messages; the UI thread installs the result (`LiveModel.install`), so views never
see a half-built model. Views react to `ModelReady` / `ModelFailed` (the app forwards them).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.worker import Worker, get_current_worker

from tui_lab.analysis import count_params, memory
from tui_lab.app.fmt import fmt_bytes
from tui_lab.app.threads import configure_openmp
from tui_lab.config import ModelConfig

_DEVICE = re.compile(r"^(cpu|mps|cuda)(:\d+)?$")


class ModelStatus(Message):
    """Progress of a build, for the status line."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ModelReady(Message):
    """A model was built or loaded; `install` it on the UI thread."""

    def __init__(self, config: ModelConfig, model: Any, tokenizer: Any, device: str, origin: str,
                 example: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.config, self.model, self.tokenizer, self.device, self.origin = config, model, tokenizer, device, origin
        self.example = example  # (source, target) text the model was trained on, for the views' inputs


class ModelFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


@dataclass
class LiveModel:
    config: ModelConfig
    device: str = "cpu"
    model: Any = None  # tui_lab.model.Transformer once built; None until then
    tokenizer: Any = None  # a tui_lab.data Tokenizer for checkpoints/HF; None for a random preset
    generation: int = 0  # bumped on every install, so views can tell a rebuild from a repaint
    origin: str = ""  # "preset gpt2-toy", "checkpoint runs/x", ...
    example: tuple[str, str] | None = None  # a held-out (source, target) of a seq2seq task it was trained on
    building: bool = False
    status: str = "not built"
    worker: Worker | None = field(default=None, repr=False)

    @property
    def ready(self) -> bool:
        return self.model is not None and not self.building

    def install(self, ready: ModelReady) -> None:
        """Swap the new model in (UI thread only)."""
        self.config, self.model, self.tokenizer = ready.config, ready.model, ready.tokenizer
        self.device, self.origin, self.example = ready.device, ready.origin, ready.example
        self.generation += 1
        self.building = False
        self.status = f"{ready.origin} · {count_params(ready.config).total:,} params · {ready.device}"

    # -- starting builds (UI thread) ---------------------------------------------------------------
    def start_build(self, app: Any, config: ModelConfig, origin: str | None = None) -> Worker:
        origin = origin or f"config {config.name}"
        return self._start(app, lambda: _build(config, self.device), f"building {origin}", origin)

    def start_load_checkpoint(self, app: Any, folder: str) -> Worker:
        return self._start(app, lambda: _load_checkpoint(folder, self.device), f"loading checkpoint {folder}",
                           f"checkpoint {folder}")

    def start_load_hf(self, app: Any, folder: str) -> Worker:
        return self._start(app, lambda: _load_hf(folder, self.device), f"loading GPT-2 from {folder}",
                           f"hf {folder}")

    def cancel(self) -> bool:
        if self.worker is not None and self.building:
            self.worker.cancel()
            self.building = False
            self.status = "build cancelled"
            return True
        return False

    def _start(self, app: Any, job: Any, doing: str, origin: str) -> Worker:
        self.building, self.status = True, doing + "..."
        app.post_message(ModelStatus(self.status))

        def work() -> None:
            try:
                config, model, tokenizer = job()
            except Exception as err:  # noqa: BLE001 - every failure becomes a message, never a crash
                if not get_current_worker().is_cancelled:
                    app.post_message(ModelFailed(_one_line(err)))
                return
            if not get_current_worker().is_cancelled:  # a newer build superseded this one
                app.post_message(ModelReady(config, model, tokenizer, self.device, origin))

        self.worker = app.run_worker(work, name=doing, group="live-model", thread=True, exclusive=True,
                                     exit_on_error=False)
        return self.worker


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


# -- device and memory checks --------------------------------------------------------------------
def device_problem(device: str) -> str | None:
    """A cheap check (no torch) that `device` can exist here; None if it may, else a one-line reason."""
    if not _DEVICE.match(device):
        return f"device ({device!r}) must be cpu, cuda, cuda:N or mps"
    kind, _, index = device.partition(":")
    if kind == "mps" and sys.platform != "darwin":
        return f"device ({device!r}) is not available: mps exists only on macOS"
    if kind == "cuda":
        gpus = Path("/proc/driver/nvidia/gpus")
        if sys.platform.startswith("linux") and not gpus.is_dir():
            return f"device ({device!r}) is not available: no NVIDIA driver on this machine"
        count = len(list(gpus.iterdir())) if gpus.is_dir() else None
        if index and count is not None and int(index) >= count:
            return f"device ({device!r}) is not available: this machine has {count} CUDA device(s)"
    return None


def free_memory(device: str) -> int | None:
    """Bytes free on `device`: MemAvailable for the CPU, the CUDA driver's count for a GPU."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def fit_problem(weights: int, free: int | None, device: str) -> str | None:
    """Refuse weights that do not fit in what is free (None when the free memory is unknown)."""
    if free is None or weights <= free:
        return None
    return f"refused: the weights need {fmt_bytes(weights)} but only {fmt_bytes(free)} is free on {device}"


# -- jobs (worker thread) ----------------------------------------------------------------------
def _check_device(device: str) -> None:
    from tui_lab.hardware import pick_device  # imports torch

    pick_device(device)
    if device.startswith("cuda:"):
        import torch

        if int(device.split(":")[1]) >= torch.cuda.device_count():
            raise ValueError(f"device ({device!r}) is not available: torch sees {torch.cuda.device_count()} GPU(s)")


def _build(config: ModelConfig, device: str) -> tuple[ModelConfig, Any, Any]:
    configure_openmp()
    _check_device(device)
    problem = fit_problem(memory(config).weights, free_memory(device), device)
    if problem:
        raise ValueError(problem)
    from tui_lab.model import build_model

    return config, build_model(config, device=device).eval(), None


def _load_checkpoint(folder: str, device: str) -> tuple[ModelConfig, Any, Any]:
    _check_device(device)
    from tui_lab.checkpoint import load_checkpoint

    ckpt = load_checkpoint(folder, device=device)
    return ckpt.config, ckpt.model.eval(), ckpt.tokenizer


def _load_hf(folder: str, device: str) -> tuple[ModelConfig, Any, Any]:
    """`load_hf_gpt2` may return a model, or an object/tuple carrying model and tokenizer."""
    _check_device(device)
    from tui_lab.hf_gpt2 import load_hf_gpt2

    loaded = load_hf_gpt2(folder, device=device)
    if isinstance(loaded, tuple):
        model, tokenizer = loaded[0], loaded[1] if len(loaded) > 1 else None
    else:
        model, tokenizer = getattr(loaded, "model", loaded), getattr(loaded, "tokenizer", None)
    return model.config, model.eval(), tokenizer
