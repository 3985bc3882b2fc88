"""The sweep's values field at 80x24, read from the rendered screen: a list wider than the field ends in "…"
after a whole value, never inside one (the crawler, issue 36: "…,sinusoidal…")."""

from __future__ import annotations

from app_experiments_support import open_view
from app_support import app_for, screen_lines
from screen_rules import input_values
from textual.widgets import OptionList

from tui_lab.experiments import names


async def test_the_values_end_after_a_whole_value_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_view(pilot)
        app.query_one("#ex-list", OptionList).highlighted = names().index("sweep")
        await pilot.pause()
        app.query_one("#ex-list", OptionList).focus()
        await pilot.pause()
        lines = screen_lines(app)
        row = next(line for line in lines if " values " in line)
        assert "sinusoidal" in row and row.rstrip().endswith("…"), row
        shown = row.split(" values ", 1)[1].rstrip(" …")
        values = "sinusoidal, learned, rope, alibi, sinusoidal_halves, none, relative, t5".split(", ")
        assert all(item.strip() in values for item in shown.split(",") if item.strip()), row
        assert not input_values(app, lines), input_values(app, lines)
