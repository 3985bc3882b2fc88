"""The figures under a lesson are the last run's, whichever experiment the list now picks: the status line says
whose they are (a person who ran order-blindness and moved down the list read its tokens table under another
experiment's lesson, with nothing naming the run), and picking the run's experiment again brings its own line back."""

from __future__ import annotations

from app_experiments_support import SMALL, open_view
from app_support import app_for, screen_lines, wait_for


async def test_the_status_names_the_run_the_figures_come_from():
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        ran = view.selected
        await pilot.press("r")
        await wait_for(pilot, lambda: view.finished is not None and not view.running, 60)
        done = str(view.query_one("#ex-status").render())
        assert done.startswith(f"{ran} done"), done
        view.home().focus()
        await pilot.press("down")
        await pilot.pause()
        picked = view.selected
        assert picked != ran
        status = view.query_one("#ex-status")
        r, lines = status.region, screen_lines(app)
        shown = " ".join(line[r.x:r.right].strip() for line in lines[r.y:r.bottom])  # as the screen draws it
        assert f"figures from {ran}; r runs {picked}" in shown, "\n".join(lines)
        await pilot.press("up")
        await pilot.pause()
        assert str(view.query_one("#ex-status").render()) == done
