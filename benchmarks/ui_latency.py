"""Key-to-screen latency while the app trains, and in-app training speed vs the headless engine.

Drives the real app headless (`App.run_test`) with training running (not paused) on the Train view,
types keys into an Input and times each from the key event to the first screen update that shows it
(the compositor's `_display` call). The same TrainConfig then runs headless in a subprocess, before and
after the in-app run (the machine is shared: the two headless runs bracket the in-app one). The last
line is one JSON object: {"p95_ms", "in_app_tokens_per_s", "headless_tokens_per_s", ...}.

Both sides compare the same number: the median over steps (after the first WARMUP_STEPS) of each step's
own rate, `tokens / step_s` from its StepEvent (the event's `tokens_per_s` is a running mean since the
first step, docs/CONTRACTS.md, which would carry the warm-up steps along).

    .venv/bin/python benchmarks/ui_latency.py [--steps 40] [--keys 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_lab.app.threads import configure_openmp, train_threads  # noqa: E402

configure_openmp()  # as `tui-lab` does before torch is imported

from textual import events  # noqa: E402

from tui_lab.app.widgets.train_form import APP_LM  # noqa: E402
from tui_lab.cli.launch import make_app  # noqa: E402

WARMUP_STEPS = 3
HEADLESS = """
import json, statistics, sys
from tui_lab import load_preset
from tui_lab.train import Trainer, train_config_for
fields = json.loads(sys.argv[1])
trainer = Trainer(load_preset("gpt2-toy"), train_config_for(None, **fields))
rates = [(e.tokens / e.step_s) for e in (trainer.step() for _ in range(fields["steps"]))]
print(json.dumps({"tokens_per_s": statistics.median(rates[WARMUP:])}))
""".replace("WARMUP", str(WARMUP_STEPS))


def headless(fields: dict, threads: int | None = None) -> float:
    """The engine alone in a fresh process: torch's default threads (what `tui-lab train` does), or `threads`."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", HEADLESS, json.dumps(fields)], capture_output=True, text=True,
                         check=True, env=env, cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])["tokens_per_s"]


async def in_app(fields: dict, keys: int) -> tuple[list[float], list[float]]:
    """(key-to-screen latencies in ms, per-step tokens/s) with training running."""
    app = make_app(["--preset", "gpt2-toy"])
    painted: list[tuple[float, int]] = []  # (time, length of the typed text when the screen was updated)
    steps: list = []  # the step events the Train view received
    seen: set[int] = set()

    def hook(message) -> None:
        event = getattr(message, "event", None)
        if type(message).__name__ == "TrainEvent" and getattr(event, "kind", "") == "step" and \
                event.step not in seen:  # the hook sees a message again at each widget it bubbles through
            seen.add(event.step)
            steps.append(event)

    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        while not app.query("#view-train"):
            await pilot.pause(0.05)
        app.show_view("train")
        await pilot.pause()
        view = app.view("train")
        for name, value in fields.items():
            inputs = app.query(f"#tf-{name}")
            if inputs:
                inputs.first().value = str(value)
        box = app.query_one("#tf-folder")
        box.focus()
        display = app._display

        shown_event = asyncio.Event()
        wanted = [0]

        def spy(screen, renderable):  # the compositor hands a frame to the terminal
            if renderable is not None:
                painted.append((time.perf_counter(), len(box.value)))
                if wanted[0] and len(box.value) >= wanted[0]:
                    shown_event.set()  # wakes the typist without polling (polling would hold the GIL)
            return display(screen, renderable)

        app._display = spy
        view.action_start()
        while len(view.store.current.train_loss) < WARMUP_STEPS:
            await asyncio.sleep(0.1)
        box.value = ""  # an Input selects its text when focused: the first key would replace it, not add to it
        latencies = []
        for i in range(keys):
            if view.session.ended:
                break
            want, sent = len(box.value) + 1, time.perf_counter()
            wanted[0] = want
            shown_event.clear()
            app._driver.send_message(events.Key("a", "a"))
            await asyncio.wait_for(shown_event.wait(), timeout=10)
            wanted[0] = 0
            shown = next(t for t, n in painted if t >= sent and n >= want)
            latencies.append((shown - sent) * 1000)
            await asyncio.sleep(0.05 + 0.1 * (i % 3))  # a person types irregularly
        rates = [e.tokens / e.step_s for e in steps if e.step > WARMUP_STEPS]
        view.action_stop()
        while view.training:
            await asyncio.sleep(0.1)
    return latencies, rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--keys", type=int, default=60)
    args = parser.parse_args()
    fields = {k: APP_LM[k] for k in ("batch_size", "seq_len", "lr", "schedule")} | {
        "steps": args.steps, "eval_every": 0, "sample_every": 0}
    load = os.getloadavg()
    before = headless(fields)
    latencies, rates = asyncio.run(in_app(fields, args.keys))
    after = headless(fields)
    same_threads = headless(fields, train_threads())
    head = (before + after) / 2
    inside = statistics.median(rates) if rates else 0.0
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) >= 2 else float("nan")
    print(f"load average {load[0]:.2f} (cores {os.cpu_count()}); keys {len(latencies)}, "
          f"median {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms, max {max(latencies):.1f} ms")
    print(f"training tokens/s: in app {inside:,.0f} (median of {len(rates)} steps), headless {before:,.0f} before "
          f"and {after:,.0f} after: {inside / head:.0%} of headless; headless with the app's {train_threads()} "
          f"thread(s): {same_threads:,.0f}")
    print(json.dumps({"p95_ms": round(p95, 1), "in_app_tokens_per_s": round(inside, 1),
                      "headless_tokens_per_s": round(head, 1), "ratio": round(inside / head, 3),
                      "headless_same_threads_tokens_per_s": round(same_threads, 1),
                      "keys": len(latencies), "load_1min": round(load[0], 2)}))


if __name__ == "__main__":
    main()
