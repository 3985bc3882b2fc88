"""Generate's patching panel warns, as `tui-lab patch` does, when the clean-corrupt gap cannot carry a recovery:
the core's whole warning line on the rendered screen at 80x24, with every layer's row still drawn; a pair with a
real gap shows none."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_text, wait_for, wait_ready

from tui_lab.app.views.generate.patch_panel import DEFAULT_CORRUPT
from tui_lab.mechanism import readouts

# Both answer ' hill' in the shipped English toy: against ' town' the logit differences are 3.21 and 3.07.
SMALL_GAP_CORRUPT = "Tom walked to the river. Tom walked to the"


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")  # no thread-count measurement inside a test


def flat(app) -> str:
    """The screen's words joined by single spaces: a warning wrapped over lines reads as one."""
    return " ".join(screen_text(app).split())


async def patch_panel(pilot):
    """Generate's patching panel, opened by its key (p) on the shipped English toy."""
    app = pilot.app
    await wait_ready(pilot)
    app.show_view("generate")
    await pilot.pause()
    await pilot.press("p")
    await wait_for(pilot, lambda: "corrupt" in screen_text(app))
    return app.query_one("#gen-patch")


async def test_a_small_gap_pair_shows_the_clis_warning_at_80x24():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await patch_panel(pilot)
        panel.query_one("#patch-corrupt").value = SMALL_GAP_CORRUPT
        panel.query_one("#patch-wrong").value = " town"
        panel.run()
        await wait_for(pilot, lambda: "restored" in screen_text(app), 60)
        tok, model = app.live.tokenizer, app.live.model
        clean = tok.encode(panel.value("clean"))
        result = readouts.patching_of(model, tok, clean, tok.encode(SMALL_GAP_CORRUPT), "", " town")
        warning = result.table.warning
        assert warning is not None and "gap in logit difference is only" in warning
        assert " ".join(warning.split()) in flat(app)
        text = screen_text(app)
        assert all(f"{i}_pre" in text for i in range(model.config.decoder_layers))  # no layer's row lost to it

        panel.query_one("#patch-corrupt").value = DEFAULT_CORRUPT
        panel.query_one("#patch-wrong").value = ""
        panel.run()
        await wait_for(pilot, lambda: "restored · clean" in flat(app), 60)
        assert "warning:" not in screen_text(app)


async def test_r_again_on_a_refused_pair_shows_something():
    """A pair of different lengths is refused in the panel's summary line; r again on it said the same line, and the
    screen did not change (the crawler's long tier: a dead press). The second press notifies as well."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await patch_panel(pilot)
        panel.query_one("#patch-corrupt").value = DEFAULT_CORRUPT + " and on"
        panel.grid.focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: "corrupt must be as many tokens as clean" in flat(app), 30)
        assert not app._notifications
        await pilot.press("r")
        await wait_for(pilot, lambda: bool(app._notifications), 10)
        note = list(app._notifications)[-1]
        assert note.title == "not run" and "corrupt must be as many tokens as clean" in note.message
        assert "[red]" not in note.message and not panel.running
