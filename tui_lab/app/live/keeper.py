"""The App's side of the live model: the first build (or load) once the views are in, rebuilds the views ask
for (refused at once when the weights cannot fit), cancel, and what a finished build does: install it, say
where its weights came from, tell every view. A served session keeps its model and run (app/autosave.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.app import App

from tui_lab.analysis import memory
from tui_lab.app.live.model import LiveModel, ModelFailed, ModelReady, ModelStatus
from tui_lab.app.origin import origin_subtitle
from tui_lab.app.view_contract import LabView
from tui_lab.config import ModelConfig
from tui_lab.devices import fit_problem, free_memory
from tui_lab.served import ServedPolicy


class LiveModelKeeper:
    def __init__(self, app: App, live: LiveModel, views: Callable[[], list[LabView]]) -> None:
        self.app, self.live, self._views = app, live, views

    def start(self, build: bool, checkpoint: str | None, from_hf: str | None, origin: str,
              hf_options: dict[str, bool]) -> None:
        """The launch's model, once every view is mounted (the worker's `import torch` holds the GIL)."""
        if not build:
            self.app.sub_title = "live model not built"
        elif checkpoint:
            self.live.start_load_checkpoint(self.app, checkpoint)
        elif from_hf:
            from tui_lab.app.hub_open import open_from_hub  # its modals are not needed for the first frame

            open_from_hub(self.app, from_hf, **hf_options)  # an uncached id asks before downloading
        else:
            self.live.start_build(self.app, self.live.config, origin)

    def rebuild(self, config: ModelConfig, origin: str | None = None) -> None:
        """Rebuild the live model from `config` in a worker; refused at once when it cannot fit."""
        problem = self.refusal(config)
        if problem:
            self.app.notify(problem, title="not built", severity="error")
            return
        self.live.start_build(self.app, config, origin or f"config {config.name}")

    def refusal(self, config: ModelConfig) -> str | None:
        """Why `config` cannot be built here (its weights do not fit in free memory), or None."""
        if self.live.device.startswith("cuda"):
            return None
        return fit_problem(memory(config).weights, free_memory("cpu"), self.live.device)

    def cancel(self) -> None:
        if self.live.cancel():
            self.app.sub_title = self.live.status
            self.app.notify("build cancelled; the previous model stays live")

    def status(self, message: ModelStatus) -> None:
        self.app.sub_title = message.text

    def ready(self, message: ModelReady) -> None:
        self.live.install(message)
        self.app.sub_title = origin_subtitle(self.live)  # every view shows this model: say where its weights came from
        if self.live.origin.startswith(("checkpoint ", "hf ")):  # a load the person asked for: say what came in
            self.app.notify(f"{self.live.status}", title="loaded")
        for view in self._views():
            if view.is_mounted:  # a view mounting now reads it on mount
                view.live_model_changed()

    def failed(self, message: ModelFailed) -> None:
        self.live.building = False
        self.live.status = "failed" if self.live.model is None else self.live.status
        self.app.sub_title = f"live model: {message.error}"
        self.app.notify(message.error, title="live model", severity="error", timeout=8)

    def say_kept_run(self) -> None:
        """A served session's next visit: where the run it was training when it closed was kept (app/autosave.py).

        A terminal app keeps no run: it returns before importing anything. A served one reads the note in a thread:
        `tui_lab.train.keep` is in the training package, whose import brings torch (~10 s of the event loop at
        load 10 on 2 cores, measured in benchmarks/interface/first_keys.py: the first keys waited for it)."""
        if ServedPolicy.from_env() is None:
            return

        async def say() -> None:
            note = await asyncio.to_thread(_kept_run_note)  # imported there too
            if note:
                self.app.notify(note, title="your run was kept", timeout=30)

        self.app.run_worker(say(), group="kept-run", exit_on_error=False)

    def keep(self) -> None:
        """A served session saves its live model to its own folder before it goes (app/autosave.py); a terminal app
        quits without importing it (its import brings torch: seconds at quit when the model never arrived)."""
        if ServedPolicy.from_env() is None:
            return
        from tui_lab.app.autosave import autosave

        autosave(self.live)


def _kept_run_note() -> str | None:
    from tui_lab.app.autosave import kept_run_note

    return kept_run_note()
