"""The two sides ui_latency.py compares: the app on its Train view, driven headless (`AppUnderTest`: it fills
the form, starts a run, counts its steps, types keys and times each to the screen), and the same run's trainer
without the app (`headless`). benchmarks/gpu/gpu_check_app.py drives the app with the same class.

Import after `tui_lab.openmp.configure_openmp()` (as ui_latency.py does): this module imports torch."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace

from cpu_meter import CpuWindow
from textual import events

from tui_lab.app.modals.confirm_run import ConfirmLongRun
from tui_lab.app.priority import spawn
from tui_lab.app.views.train.session import POLL_S, SNAPSHOT_EVERY_S
from tui_lab.train.process import SharedRunControl, TrainerProcess, TrainerSpec

WARMUP_STEPS = 3


def headless(spec: TrainerSpec) -> list[float]:
    """The in-app run's trainer without the app: the same TrainerSpec (model, tokenizer, batch, threads), the
    same child process started the same way (TrainerProcess, from the spawner thread, so the same OpenMP
    environment and nice value), read the way the Train view's session reads it (poll, a snapshot every
    SNAPSHOT_EVERY_S, the final one). Per-step tokens/s of every step after the warm-up."""
    process = TrainerProcess(replace(spec, live_state=None), SharedRunControl())
    spawn(process.start)
    rates: list[float] = []
    next_snapshot = time.monotonic() + SNAPSHOT_EVERY_S
    try:
        while True:
            message = process.poll(POLL_S)
            if message is None:
                if not process.alive:
                    raise RuntimeError(f"the headless trainer died ({process.describe_exit()})")
                if time.monotonic() >= next_snapshot:
                    process.request_snapshot()
                    next_snapshot = time.monotonic() + SNAPSHOT_EVERY_S
                continue
            if message.kind == "step" and message.step > WARMUP_STEPS:
                rates.append(message.tokens / message.step_s)
            elif message.kind == "failed":
                raise RuntimeError(f"the headless trainer failed: {message.error}")
            elif message.kind == "ended":
                process.fetch_snapshot()  # as the session does when a run ends
                return rates
    finally:
        process.close()


class AppUnderTest:
    """One app on the Train view for every round: each round starts a run, watches, types, stops it."""

    def __init__(self, app, fields: dict) -> None:
        self.app, self.fields = app, fields
        self.painted: list[tuple[float, int]] = []  # (time, length of the typed text when the screen was updated)
        self.steps: list = []  # the step events of the run in progress
        self.shown = asyncio.Event()
        self.wanted = 0
        self.trainer_nice: int | None = None
        self.spec: TrainerSpec | None = None  # the in-app run's, set by its first round

    def hook(self, message) -> None:
        event = getattr(message, "said", None)
        if type(message).__name__ == "RunSaid" and getattr(event, "kind", "") == "step" and \
                all(e.step != event.step for e in self.steps[-3:]):  # the hook sees a message at each hop
            self.steps.append(event)

    async def open(self, pilot) -> None:
        app = self.app
        while not app.query("#view-train"):
            await pilot.pause(0.05)
        app.show_view("train")
        await pilot.pause()
        self.view = app.view("train")
        for name, value in self.fields.items():
            inputs = app.query(f"#tf-{name}")
            if inputs:
                inputs.first().value = str(value)
        self.box = app.query_one("#tf-folder")
        display = app._display

        def spy(screen, renderable):  # the compositor hands a frame to the terminal
            if renderable is not None:
                self.painted.append((time.perf_counter(), len(self.box.value)))
                if self.wanted and len(self.box.value) >= self.wanted:
                    self.shown.set()  # wakes the typist without polling (polling would hold the GIL)
            return display(screen, renderable)

        app._display = spy

    async def run(self, keys: int, watch: float, profile: bool) -> tuple[list, list, dict]:
        """(key-to-screen latencies in ms, per-step tokens/s, the app's CPU) for one run: `watch` seconds with
        nobody typing (the "watching" window), then `keys` keys (the "typing" window)."""
        app, view = self.app, self.view
        self.steps = []
        self.box.focus()
        view.action_start()
        while len(self.steps) < WARMUP_STEPS:
            if isinstance(app.screen, ConfirmLongRun):  # a long --steps on a slow (or busy) machine asks first
                app.screen.dismiss(True)
            await asyncio.sleep(0.1)
        self.spec = view.session.process.spec  # what the headless runs train: the same model, tokenizer, batch
        pid = view.session.process._process.pid  # noqa: SLF001 - the trainer child, for its CPU
        self.trainer_nice = os.getpriority(os.PRIO_PROCESS, pid)
        cpu, windows = {}, {}
        if watch > 0:  # the run on screen, nobody typing: what displaying the run costs
            window = windows["watching"] = CpuWindow(pid, profile)
            first = len(self.steps)
            window.begin()
            await asyncio.sleep(watch)
            cpu["watching"] = window.end(len(self.steps) - first)
        if keys:
            window = windows["typing"] = CpuWindow(pid, profile)
            first = len(self.steps)
            window.begin()
        latencies = await self._type(keys)
        rates = [e.tokens / e.step_s for e in self.steps if e.step > WARMUP_STEPS]
        if keys:
            cpu["typing"] = window.end(len(self.steps) - first)
        if profile:
            cpu["profile"] = "\n".join(f"== while {name} ==\n{w.report()}" for name, w in windows.items())
        view.action_stop()
        while view.training:
            await asyncio.sleep(0.1)
        app.set_focus(None)  # idle between rounds: no cursor blinking while the headless run measures
        return latencies, rates, cpu

    async def _type(self, keys: int) -> list[float]:
        self.box.value = ""  # an Input selects its text when focused: the first key would replace it, not add
        latencies = []
        for i in range(keys):
            if self.view.session.ended:
                break
            want, sent = len(self.box.value) + 1, time.perf_counter()
            self.wanted = want
            self.shown.clear()
            self.app._driver.send_message(events.Key("a", "a"))
            await asyncio.wait_for(self.shown.wait(), timeout=10)
            self.wanted = 0
            shown = next(t for t, n in self.painted if t >= sent and n >= want)
            latencies.append((shown - sent) * 1000)
            await asyncio.sleep(0.05 + 0.1 * (i % 3))  # a person types irregularly
        return latencies
