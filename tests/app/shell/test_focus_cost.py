"""A focus change costs what changed on screen, not the whole app (issue 23: a Tab took 0.3-1.7 s busy).

Measured in benchmarks/interface/tab_cost.py; here the two causes found by profiling are pinned: Textual's footer
rebuilt its keys on every focus change, and its screen repainted every cell.
"""

from __future__ import annotations

from app_support import app_for, view_mounted, wait_for
from textual.widgets import Input

from tui_lab.app.widgets.steady_footer import SteadyFooter


async def test_tab_between_fields_keeps_the_footer_and_repaints_only_the_fields():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await view_mounted(pilot, "architecture")
        await wait_for(pilot, lambda: not app.view("architecture").fields_pending)  # a Tab before waits for them
        await pilot.press("i")
        first = app.query_one("#f-encoder_layers", Input)
        await wait_for(pilot, lambda: app.focused is first)
        footer = app.query_one(SteadyFooter)
        await wait_for(pilot, lambda: "quit" not in _descriptions(footer))  # a field's keys
        keys = list(footer.children)
        screen = app.screen
        await pilot.press("tab")
        assert app.focused is app.query_one("#f-decoder_layers", Input)
        assert not screen._repaint_required  # the whole screen is not redrawn for a focus change
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) == keys  # the same key widgets: not removed and mounted again
        await pilot.press("escape")  # out of the field: the view's keys, so the footer does change
        await wait_for(pilot, lambda: "quit" in _descriptions(footer))


def _descriptions(footer: SteadyFooter) -> set[str]:
    return {getattr(key, "description", "") for key in footer.children}
