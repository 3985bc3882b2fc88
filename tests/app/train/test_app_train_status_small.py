"""Train's status at 80x24, read from the rendered screen (issue 36 item 19): the run's note (a vocabulary that
replaces the preset's, with the parameters before and after) is whole, not cut after "the preset's (256):"."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import start_paused, stop, train_view
from screen_rules import text_problems


async def test_the_runs_note_is_whole_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        view = await train_view(pilot)
        await start_paused(pilot, view)
        await wait_for(pilot, lambda: "params" in " ".join(screen_lines(app)))
        await pilot.pause(1.5)  # the 1 Hz status draw
        lines = screen_lines(app)
        shown = " ".join(" ".join(line.split()) for line in lines)
        assert "replaces the preset's" in view.message, view.message  # the case this test is about
        tail = " ".join(view.message.split()[-3:])
        assert tail in shown, "\n".join(lines)
        problems = [p for p in text_problems(app, lines) if "tr-status" in p]
        assert not problems, problems
        await stop(pilot, view)
