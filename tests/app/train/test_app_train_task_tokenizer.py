"""The Train form's tokenizer row on a task's model at 80x24, read from the rendered screen: the task's word
vocabulary is named whole, never "words (task's" with no mark (the crawler, issue 36)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_ready
from screen_rules import text_problems


async def test_the_task_tokenizer_label_is_whole_at_80x24():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("4")
        await view_mounted(pilot, "train")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        row = next(line for line in lines if "tokenizer" in line)
        assert "task's words" in row, "\n".join(lines)
        assert not text_problems(app, lines), text_problems(app, lines)
