"""Train view with a mixture-of-experts model, at 80x24: the expert load per layer as a live heatmap (from the
trainer process's step events), the aux loss beside the loss; Architecture: total and active parameters."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_text, view_mounted, wait_for
from app_train_support import start_paused, steps, stop, train_view

from tui_lab import load_preset
from tui_lab.analysis import count_params
from tui_lab.app.widgets.heatmap import Heatmap


@pytest.fixture(autouse=True)
def _one_training_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")


async def test_architecture_shows_total_and_active_parameters():
    app = app_for("--preset", "moe-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await view_mounted(pilot, "train")  # every view mounted before leaving
        await pilot.pause()
        counted = count_params(load_preset("moe-toy"))
        total = str(app.query_one("#arch-total").render())
        assert f"{counted.total:,} parameters ({counted.active:,} active per token)" in total
        screen = screen_text(app)  # what a person reads at 80 columns (the line wraps after "active")
        assert f"{counted.total:,} parameters ({counted.active:,} active" in screen


async def test_train_view_draws_expert_load_and_the_aux_loss_at_80x24():
    app = app_for("--preset", "moe-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await train_view(pilot)
        await start_paused(pilot, view)
        await steps(pilot, view, 2)  # then the 1 Hz redraw
        heatmap = app.query_one("#tr-experts", Heatmap)
        assert heatmap.shape == (4, 4)  # layers x experts
        assert all(sum(row) == 4 * 16 * 2 for row in heatmap.values)  # 64 tokens a layer, each to 2 experts
        assert heatmap.values == [list(map(float, row)) for row in view.stats["expert_load"]]
        screen = screen_text(app)
        assert f"aux {view.stats['aux']:.4f}" in screen and "loss" in screen
        # At 80x24 the lower panel takes the loss plot's place when `l` asks for it: the expert load first
        await pilot.press("l")
        await wait_for(pilot, lambda: "tokens routed" in screen_text(app))
        screen = screen_text(app)
        assert "experts, step 2: tokens routed, top-2 of 4" in screen and "layer 0" in screen and "e3" in screen
        assert f"aux {view.stats['aux']:.4f}" in screen  # the run's status stays on screen
        await pilot.press("l", "l")  # the loss plot again, then the next panel (learning rate)
        await wait_for(
            pilot, lambda: "learning rate · l" in screen_text(app) and "tokens routed" not in screen_text(app)
        )
        await stop(pilot, view)
