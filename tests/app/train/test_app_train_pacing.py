"""While a run trains, the loss plot gives way: it waits while a person types and redraws within its share of
the UI thread's time, and it catches up as soon as the keys stop. The status line never waits."""

from __future__ import annotations

import time

from app_support import app_for, wait_for
from app_train_support import SIZE, start_paused, steps, stop, train_view

from tui_lab.app.views.train.draw import PLOT_SHARE
from tui_lab.app.widgets.line_plot import LinePlot


async def test_the_loss_plot_waits_while_keys_arrive_and_then_catches_up(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await train_view(pilot)
        plot = app.query_one("#tr-loss", LinePlot)
        await start_paused(pilot, view)
        await steps(pilot, view, 2)
        await wait_for(pilot, lambda: plot.points == 2)
        assert plot.cost_s > 0 and not plot.due(PLOT_SHARE)  # just drawn: the next drawing waits its turn

        app.last_key_at = float("inf")  # a person typing, from now on
        view.action_step()
        await wait_for(pilot, lambda: len(view.store.current.train_loss) == 3)
        time.sleep(plot.cost_s / PLOT_SHARE)  # the plot's share of time has passed: only the keys hold it
        await pilot.pause(2.2)  # two ticks of the 1 Hz timer
        assert plot.points == 2  # held while the person types
        assert "step 3/" in str(app.query_one("#tr-status").render())  # the status line is not held

        app.last_key_at = float("-inf")  # the keys stopped
        await wait_for(pilot, lambda: plot.points == 3, 60)
        await stop(pilot, view)
