"""The figures under a lesson are the last run's, whichever experiment the list now picks: the status line says
whose they are (a person who ran order-blindness and moved down the list read its tokens table under another
experiment's lesson, with nothing naming the run), and picking the run's experiment again brings its own line back."""

from __future__ import annotations

from app_experiments_support import SMALL, open_view
from app_support import app_for, screen_lines, wait_for
from textual.widgets import Input, OptionList, Select

from tui_lab.experiments import names


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


async def test_a_cancelled_sweeps_partial_figures_are_named_as_the_sweeps():
    """A sweep draws each finished part as it goes; cancelled after one, its part stays on screen, and the status
    must name the sweep (it named the run that finished before it) and say the figures are unfinished."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        first = view.selected
        await pilot.press("r")
        await wait_for(pilot, lambda: view.finished is not None and not view.running, 60)
        listing = app.query_one("#ex-list", OptionList)
        listing.highlighted = names().index("sweep")
        await pilot.pause()
        app.query_one("#ex-field", Select).value = "norm"
        await pilot.pause()
        app.query_one("#ex-values", Input).value = "layernorm,rmsnorm"
        app.query_one("#ex-options", Input).value = "steps=2000; d_model=16; layers=1; batch_size=2; seq_len=8"
        listing.focus()
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: view.running and view.result.experiment == "sweep", 120)  # one part drawn
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running, 60)
        assert view.result.experiment == "sweep" and view.result is not view.finished
        cancelled = str(view.query_one("#ex-status").render())
        assert cancelled.startswith("sweep cancelled"), cancelled
        await pilot.press("up")
        await pilot.pause()
        status = view.query_one("#ex-status")
        r, lines = status.region, screen_lines(app)
        shown = " ".join(line[r.x:r.right].strip() for line in lines[r.y:r.bottom])
        assert f"figures from sweep (unfinished); r runs {view.selected}" in shown, "\n".join(lines)
        assert first not in shown
        await pilot.press("down")
        await pilot.pause()
        assert str(view.query_one("#ex-status").render()) == cancelled
