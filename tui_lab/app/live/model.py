"""The ONE live model every view reads: config, device, model, tokenizer, and a generation counter.

Building happens in a thread worker (torch is imported there, never on the UI's import path). The
worker only posts messages; the UI thread installs the result (`LiveModel.install`), so views never
see a half-built model. Views react to `ModelReady` / `ModelFailed` (the app forwards them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message
from textual.worker import Worker, get_current_worker

from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig
from tui_lab.errors import one_line
from tui_lab.loading import load_model, shipped_for
from tui_lab.openmp import configure_openmp


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
    saved: tuple[int, str] | None = None  # (generation, folder): these very weights were written there

    def mark_saved(self, folder: str, generation: int) -> None:
        """The model of `generation` was written to `folder` (kept only while it is still the live one)."""
        if generation == self.generation:
            self.saved = (generation, folder)

    @property
    def kept_in(self) -> str | None:
        """The folder that holds the live weights as they are: saved by this app, or loaded from it."""
        if self.saved is not None and self.saved[0] == self.generation:
            return self.saved[1]
        kind, _, rest = self.origin.partition(" ")
        return rest if kind in ("checkpoint", "hf") and rest else None

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
        shipped = shipped_for(config)  # an unedited shipped toy loads its trained weights
        origin = f"shipped {shipped}" if shipped else origin or f"config {config.name}"
        return self._start(app, ("config", config), f"building {origin}", origin)

    def start_load_checkpoint(self, app: Any, folder: str) -> Worker:
        return self._start(app, ("checkpoint", folder), f"loading checkpoint {folder}", f"checkpoint {folder}")

    def start_load_hf(self, app: Any, folder: str) -> Worker:
        return self._start(app, ("hf", folder), f"loading Hugging Face {folder}", f"hf {folder}")

    def cancel(self) -> bool:
        if self.worker is not None and self.building:
            self.worker.cancel()
            self.building = False
            self.status = "build cancelled"
            return True
        return False

    def _start(self, app: Any, source: tuple[str, Any], doing: str, origin: str) -> Worker:
        """Load `source` (kind, value) with `tui_lab.loading` on a thread worker."""
        self.building, self.status = True, doing + "..."
        app.post_message(ModelStatus(self.status))
        device = self.device

        def work() -> None:
            configure_openmp()  # before the worker's first torch import
            try:
                loaded = load_model(*source, device=device)
            except Exception as err:  # noqa: BLE001 - every failure becomes a message, never a crash
                if not get_current_worker().is_cancelled:
                    app.post_message(ModelFailed(one_line(err)))
                return
            if not get_current_worker().is_cancelled:  # a newer build superseded this one
                app.post_message(ModelReady(loaded.config, loaded.model, loaded.tokenizer, loaded.device, origin))

        self.worker = app.run_worker(work, name=doing, group="live-model", thread=True, exclusive=True,
                                     exit_on_error=False)
        return self.worker
