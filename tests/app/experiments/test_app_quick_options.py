"""The lesson's options line reads what a run would use: with quick ticked (k), the quick values (issue 36 item 24:
induction-heads read "steps=1500 ... seed=0" while its quick run trained 1,000 steps on seed 1)."""

from __future__ import annotations

import re

from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready
from textual.widgets import OptionList

from tui_lab.experiments import registry


def options_line(app) -> str:
    """The options line as drawn, its wrapped rows joined."""
    text = screen_text(app)
    start = re.search(r"(quick options|options): ", text)
    assert start, text
    return " ".join(row.strip(" │") for row in text[start.start():].splitlines()[:3])


async def test_quick_ticked_shows_the_quick_options():
    exp = registry.get("induction-heads")
    full, quick = exp.resolve(False), exp.resolve(True)
    changed = [k for k in quick if quick[k] != full[k]]
    assert changed  # the case the item names: steps and seed differ
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "experiments")
        await pilot.press("7")
        app.query_one("#ex-list", OptionList).highlighted = registry.names().index("induction-heads")
        await wait_for(pilot, lambda: exp.title[:40] in screen_text(app))
        line = options_line(app)
        assert line.startswith("options:") and f"steps={full['steps']}" in line.replace(",", "")
        await pilot.press("k")
        await wait_for(pilot, lambda: "quick options: " in screen_text(app))
        line = options_line(app).replace(",", "")
        for key in changed:
            assert f"{key}={quick[key]}" in line, line
        await pilot.press("k")
        await wait_for(pilot, lambda: "quick options: " not in screen_text(app))
