"""Train's lower panels at 80x24, read from the rendered screen: `l` shows each panel that applies in the loss
plot's place, named in its border, and the run's status line stays on screen (it scrolled off, out of reach of
every key); on gpt2-toy no press shows nothing new (alignment and expert load do not apply)."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, wait_for
from app_train_support import train_view


async def test_l_shows_each_panel_that_applies_and_keeps_the_status_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await train_view(pilot)
        await pilot.pause(0.5)
        status = screen_lines(app)[3]  # the view's first line: the run's status
        seen = []
        for _ in range(4):
            before = screen_text(app)
            await pilot.press("l")
            await wait_for(pilot, lambda before=before: screen_text(app) != before, 10)
            await pilot.pause(0.3)
            lines = screen_lines(app)
            assert lines[3] == status, f"the status line left the screen: {lines[3]!r}"
            seen.append(next((line for line in lines if "╭─" in line), "the loss plot"))
        assert any("gradient norms" in title for title in seen), seen
        assert seen[-1] == "the loss plot", seen  # lr, gradients, samples, then the plot again
        assert not any("alignment" in t or "expert" in t for t in seen), seen
