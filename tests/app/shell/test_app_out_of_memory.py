"""The app when the device runs out of memory: Apply and Generate say so in one line naming the device, and
the live model stays live (no GPU here: torch.OutOfMemoryError is raised where the device would raise it)."""

from __future__ import annotations

import torch
from app_support import SIZE, app_for, wait_for, wait_ready
from textual.widgets import Button, Input

import tui_lab.generation.loop
import tui_lab.loading

CUDA_OOM = "CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.68 GiB of which 1 GiB"


def oom(*args, **kwargs):
    raise torch.OutOfMemoryError(CUDA_OOM)


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_apply_out_of_memory_keeps_the_live_model_and_says_where(monkeypatch):
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        live = app.live.model
        monkeypatch.setattr(tui_lab.loading, "_random", oom)
        app.query_one("#f-decoder_layers", Input).value = "1"
        await pilot.pause()
        app.query_one("#apply", Button).press()
        await wait_for(pilot, lambda: any("out of memory" in n for n in notes(app)))
        line = ("out of memory on cpu while building 'custom (from gpt2-toy)' (it tried to allocate 3.00 GiB); "
                "try a smaller model or another device")
        assert line in notes(app) and app.sub_title == f"live model: {line}"
        assert app.live.model is live and app.live.ready and app.live.generation == 1
        assert app.live.config.decoder_layers == 4
        monkeypatch.undo()  # memory freed: the next Apply builds
        app.query_one("#apply", Button).press()
        await wait_ready(pilot, generation=2)
        assert len(app.live.model.decoder) == 1


async def test_generation_out_of_memory_is_one_line_and_the_model_generates_again(monkeypatch):
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "hello"), ("max_new_tokens", "4"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        monkeypatch.setattr(tui_lab.generation.loop, "stream", oom)
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        assert ("out of memory on cpu while generating (it tried to allocate 3.00 GiB); try fewer new tokens or a "
                "smaller beam") in notes(app)
        monkeypatch.undo()
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        assert len(app.query_one("TokenStream").tokens) == 4
