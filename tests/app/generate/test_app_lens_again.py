"""r on a new live model whose lens is the lens drawn (the same weights built again, the same checkpoint loaded
again) says the run gave the same result: the run's flash of progress came and went between two frames on the toy,
and the screen read as a dead press (the long tier's English 80x24 walk: Generate's lens, `r`, a checkpoint made
live meanwhile)."""

from __future__ import annotations

from app_support import app_for, open_view, screen_text, wait_for, wait_ready

from tui_lab.app.views.generate.lens_panel import LensPanel
from tui_lab.app.widgets.mechanism_panel import MechanismPanel


async def test_a_rerun_that_draws_the_same_lens_says_so():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_view(pilot, "generate", "5")
        await pilot.press("l")
        panel = app.query_one(LensPanel)
        await wait_for(pilot, lambda: panel.result is not None, 60)
        drawn = panel.grid.values
        app.keeper.rebuild(app.live.config, app.live.origin)  # the same weights, a new live model
        await wait_ready(pilot, generation=2)
        await pilot.press("r")
        await wait_for(pilot, lambda: panel.result is not None and panel.drawn.shown[0] == 2, 60)
        await pilot.pause()
        assert panel.grid.values == drawn  # the same numbers drawn again
        assert MechanismPanel.AGAIN in " ".join(screen_text(app).split())
