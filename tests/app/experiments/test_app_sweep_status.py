"""The Experiments status line at 80x24, read from the rendered screen: a sweep's label wider than the line
("positions=sinusoidal_halves") breaks after its "=", never inside the value (the crawler, issue 36, found
"sinusoidal_halve" / "s")."""

from __future__ import annotations

from app_experiments_support import open_view
from app_support import app_for, screen_lines
from screen_rules import text_problems
from textual.widgets import OptionList

from tui_lab.app.views.experiments.draw import break_long_words
from tui_lab.experiments import names


async def test_a_sweep_label_wider_than_the_status_breaks_after_its_name_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_view(pilot)
        app.query_one("#ex-list", OptionList).highlighted = names().index("sweep")
        await pilot.pause()
        view = app.query_one("#view-experiments")
        view._status("sweep: positions=sinusoidal_halves step 5/40 loss 3.10 (1 queued)")
        await pilot.pause()
        lines = screen_lines(app)
        at = next((i for i, line in enumerate(lines) if "sinusoidal_halves" in line), None)
        assert at is not None, "\n".join(lines)  # the value whole on one line
        whole = "positions=sinusoidal_halves" in lines[at] or lines[at - 1].rstrip().endswith("positions=")
        assert whole, "\n".join(lines)  # and its name whole, beside it or ending the line above
        assert not text_problems(app, lines), text_problems(app, lines)


def test_break_long_words_keeps_short_words_and_prefers_a_name_break():
    assert break_long_words("sweep done in 12.3 s; e exports it", 26) == "sweep done in 12.3 s; e exports it"
    assert break_long_words("a positions=sinusoidal_halves b", 20) == "a positions=\nsinusoidal_halves b"
    assert break_long_words("x" * 30, 10) == "x" * 30  # no separator: left to the line's own wrap
