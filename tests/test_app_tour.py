"""Tour: steps through seed 000, each step driving the live views; next/back/go keys."""

from __future__ import annotations

from test_app_support import SIZE, app_for, wait_for
from textual.widgets import Select, TabbedContent

from tui_lab.app.tour_steps import STEPS
from tui_lab.app.widgets.heatmap import Heatmap


async def test_tour_steps_through_and_drives_the_views():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        tour = app.view("tour")
        await wait_for(pilot, lambda: tour.driven == 0)
        assert "Step 1 of" in str(app.query_one("#tour-title").render())
        for i in range(1, len(STEPS)):
            await pilot.press("n")
            assert tour.step == i
            if STEPS[i].title == "GPT-2 vs the 2017 Transformer":
                assert app.query_one("#preset", Select).value == "transformer-2017-base"
                assert app.query_one("#arch-tabs", TabbedContent).active == "arch-compare"
            if STEPS[i].title == "Cross-attention":
                attention = app.view("attention")
                await wait_for(pilot, lambda: app.live.config.family == "encoder-decoder" and not app.live.building)
                await wait_for(pilot, lambda: app.query_one("#att-kind", Select).value == "cross"
                               and app.query_one(Heatmap).shape == (7, 6))
                await pilot.pause()
                assert "'gesehen'" in attention.query_one(Heatmap).describe_cursor()
                assert "'seen'" in attention.query_one(Heatmap).describe_cursor()
        await pilot.press("n")  # past the last step stays on it
        assert tour.step == len(STEPS) - 1
        assert "bytes" in STEPS[-1].text(app.live.config) or "B per token" in STEPS[-1].text(app.live.config)
        await pilot.press("p")
        assert tour.step == len(STEPS) - 2
        await pilot.press("g")
        assert app.query_one("#views", TabbedContent).active == STEPS[-2].view


async def test_the_kv_cache_step_opens_speed():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        tour = app.view("tour")
        await wait_for(pilot, lambda: tour.driven == 0)
        tour.show_step(len(STEPS) - 1)
        assert STEPS[tour.step].title == "The KV cache"
        await pilot.press("g")
        assert app.query_one("#views", TabbedContent).active == "speed"
