"""gpu_check's app section: the real app, headless (Textual's Pilot), with its live model on the device.

`tui-lab --preset gpt2-toy --device DEVICE` is launched and driven through the views a person would try
first: Attention (the grids of the live model), a short Train run (in the app's trainer process, on the
device; its trained weights become the live model), Generate and Speed. The Train run's per-step tokens/s
is compared with the same run headless (benchmarks/interface/ui_latency.py's `headless`, a fresh process on the
device). Where textual is not installed (a bare device machine) every app check is a skipped line.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

CHECKS = ("launch", "attention", "train", "generate", "speed")
APP_PACKAGES = ("textual", "rich", "plotext", "textual_plotext")  # what the app imports beyond the core's needs
SIZE = (120, 40)
TIMEOUT_S = 120.0  # per step of the drive: a first CUDA context and a trainer process start in it
# In-app / headless tokens/s below this on a GPU: the app takes the device from its own run. On a CPU the two
# share the cores with whatever else runs, so the ratio is reported, not judged (ui_latency.py measures it
# there, in rounds).
SLOWEST_RATIO = 0.5


def run(recorder, device: str, sizes) -> None:
    missing = next((name for name in APP_PACKAGES if importlib.util.find_spec(name) is None), None)
    if missing:
        for check in CHECKS:
            recorder.write({"check": f"app {check}", "ok": None,
                            "skipped": f"the app's packages are missing here ({missing} is not installed)"})
        return
    if sizes.smoke:  # a shared CI core: the UI thread's lower priority (README) would only slow the driving
        os.environ.setdefault("TUI_LAB_UI_NICE", "0")
    asyncio.run(drive(recorder, device, sizes))


class Seen:
    """What the app said while it was driven: the run's end, and any failure's one line."""

    def __init__(self) -> None:
        self.ended: Any = None
        self.errors: list[str] = []

    def __call__(self, message: Any) -> None:
        kind = type(message).__name__
        said = getattr(message, "said", None) if kind == "RunSaid" else None  # what the trainer process said
        if getattr(said, "kind", None) in ("ended", "failed"):
            self.ended = said
        if getattr(said, "kind", None) == "failed" or kind in ("GenerateFailed", "ModelFailed"):
            self.errors.append(said.error if said is not None else message.error)


async def drive(recorder, device: str, sizes) -> None:
    from ui_latency import AppUnderTest

    from tui_lab.cli.launch import make_app

    app, seen = make_app(["--preset", "gpt2-toy", "--device", device]), Seen()
    probe = AppUnderTest(app, train_fields(sizes))  # ui_latency's driver: it fills the Train form, counts steps

    def hook(message: Any) -> None:
        probe.hook(message)
        seen(message)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        steps: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
            "launch": lambda: launched(pilot, device, seen), "attention": lambda: attention(pilot),
            "train": lambda: train(pilot, probe, seen, device, sizes), "generate": lambda: generate(pilot, sizes, seen),
            "speed": lambda: speed(pilot, sizes)}
        for name, step in steps.items():
            start = time.perf_counter()
            try:
                recorder.passed(f"app {name}", await step(), start)
            except Exception as err:  # noqa: BLE001 - one failed view is a line; the next view is still tried
                recorder.failed(f"app {name}", err, start)


async def wait_until(pilot, condition: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        await pilot.pause(0.05)


async def launched(pilot, device: str, seen: Seen) -> dict[str, Any]:
    live = pilot.app.live
    await wait_until(pilot, lambda: live.ready or bool(seen.errors), "the live model")
    if not live.ready:
        return {"ok": False, "error": seen.errors[-1]}
    where = str(next(live.model.parameters()).device)
    return {"ok": live.device == device and where.split(":")[0] == device.split(":")[0], "live_device": live.device,
            "parameters_on": where, "origin": live.origin}


async def attention(pilot) -> dict[str, Any]:
    app = pilot.app
    app.show_view("attention")
    view = app.view("attention")
    await wait_until(pilot, lambda: view.captured_generation >= app.live.generation and bool(view.grids),
                     "the attention grids")
    rows = [row for heads in view.grids.values() for grid in heads for row in grid]
    return {"ok": len(view.grids) == app.live.config.decoder_layers and all(abs(sum(r) - 1) < 1e-3 for r in rows),
            "grids": len(view.grids), "tokens": len(view.src)}


def train_fields(sizes) -> dict[str, Any]:
    """ui_latency's run: the app form's lr and schedule, a short run, nothing between the steps."""
    from tui_lab.app.views.train.form import APP_LM

    return {k: APP_LM[k] for k in ("lr", "schedule")} | {
        "batch_size": sizes.lm_batch, "seq_len": sizes.seq_len, "steps": sizes.app_steps, "eval_every": 0,
        "sample_every": 0}


async def train(pilot, probe, seen: Seen, device: str, sizes) -> dict[str, Any]:
    from ui_latency import WARMUP_STEPS, headless

    from tui_lab.app.modals.confirm_run import ConfirmLongRun

    app, before = pilot.app, pilot.app.live.generation
    await probe.open(pilot)
    probe.steps, seen.ended = [], None
    probe.view.action_start()
    while seen.ended is None:
        if isinstance(app.screen, ConfirmLongRun):  # a slow device's estimate asks first
            app.screen.dismiss(True)
        await wait_until(pilot, lambda: seen.ended is not None or isinstance(app.screen, ConfirmLongRun),
                         "the training run")
    await wait_until(pilot, lambda: app.live.generation > before or bool(seen.errors), "the trained live model")
    rates = [e.tokens / e.step_s for e in probe.steps if e.step > WARMUP_STEPS] or \
        [e.tokens / e.step_s for e in probe.steps]
    in_app = statistics.median(rates) if rates else 0.0
    # The smoke leaves the headless run out (a second torch start, ~5 s of a shared CPU): the full run has it.
    alone = None if sizes.smoke else await asyncio.to_thread(headless, probe.fields, None, device)
    outcome = getattr(seen.ended, "outcome", "failed")
    ratio = in_app / alone if alone else None
    judged = alone is not None and device.startswith("cuda")
    return {"ok": outcome == "done" and app.live.generation > before and (not judged or ratio >= SLOWEST_RATIO),
            "outcome": outcome, "message": getattr(seen.ended, "message", None) or getattr(seen.ended, "error", None),
            "steps": len(probe.steps), "in_app_tokens_per_s": in_app, "headless_tokens_per_s": alone,
            "in_app_over_headless": ratio, "ratio_judged": judged, "live_origin": app.live.origin}


async def generate(pilot, sizes, seen: Seen) -> dict[str, Any]:
    from textual.widgets import Input

    from tui_lab.app.views.generate.token_stream import TokenStream

    app, n = pilot.app, sizes.gen_tokens
    app.show_view("generate")
    await pilot.pause()
    view = app.view("generate")
    for name, value in (("prompt", "hello"), ("max_new_tokens", str(n)), ("temperature", "0")):
        app.query_one(f"#gen-{name}", Input).value = value
    errors = len(seen.errors)
    view.action_generate()
    await wait_until(pilot, lambda: not view.running, "generation")
    tokens = len(app.query_one(TokenStream).tokens)
    return {"ok": tokens == n and len(seen.errors) == errors, "new_tokens": tokens,
            "error": seen.errors[-1] if len(seen.errors) > errors else None}


async def speed(pilot, sizes) -> dict[str, Any]:
    from textual.widgets import Input

    app = pilot.app
    app.show_view("speed")
    await pilot.pause()
    view = app.view("speed")
    if view.demo:  # the live model on the device, not the demo model
        view.action_demo()
    app.query_one("#sp-lengths", Input).value = f"{sizes.gen_tokens}, {2 * sizes.gen_tokens}"
    app.query_one("#sp-repeats", Input).value = "1"
    view.action_run()
    await wait_until(pilot, lambda: view.report is not None and not view.running, "the speed comparison")
    runs = view.report.runs
    return {"ok": bool(runs) and all(r.identical for r in runs), "lengths": [r.new_tokens for r in runs],
            "speedups": [r.speedup for r in runs], "measured_on": view.report.device}
