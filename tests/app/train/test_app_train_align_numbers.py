"""The Train view's alignment panel on the translator (numbers-de) keeps every number whole and apart, read off
the screen: issue 36's crawler found, at 160x48, the read-out "[0] 'ein' -> [0] 'one': 0.2529" filling its pane
to the border, and at 100x30 the two grids' legends run together and into the border ("1.000.00 ... 1.00│"): a
number cut short would look the same. At 80x24 the alignment showed beside the panel `l` brought, both too narrow."""

from __future__ import annotations

import re

import pytest
from app_support import app_for, screen_lines, screen_text, view_mounted, wait_for
from screen_rules import cut_numbers
from textual.widgets import Input

from tui_lab.app.widgets.heatmap import Heatmap


@pytest.fixture(autouse=True)
def _one_training_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")


async def one_step_run(pilot, view) -> None:
    """A short run of the task, started paused, one step taken (its alignment grid sent), then stopped."""
    app = pilot.app
    for name, value in {"steps": "20", "batch_size": "8"}.items():
        app.query_one(f"#tf-{name}", Input).value = value
    view.action_start(paused=True)
    await wait_for(pilot, lambda: view.session.ready and "params" in view.message, 120)
    number = view.store.current.number
    await pilot.press("n")
    await wait_for(pilot, lambda: f"run #{number} " in str(app.query_one("#tr-align-now-title").render()), 60)
    view.action_stop()
    await wait_for(pilot, lambda: not view.training, 60)


def panel_lines(app) -> list[str]:
    """The alignment panel's columns of the screen, its borders included."""
    box = app.query_one("#tr-align-box").region
    return [line.ljust(app.size.width)[box.x:box.right] for line in screen_lines(app)[box.y:box.bottom]]


SIZES = ((160, 48), (100, 30), (80, 24))


# One app and its two runs for the three sizes, reached by resizing (two trainer processes per app, ~9 s of CPU
# an app): a resize lays out and draws the panel again at the new size, as it was drawn when the app opened there.
async def test_the_alignment_panel_numbers_keep_clear_of_edges_and_each_other():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=SIZES[0]) as pilot:
        await view_mounted(pilot, "train")
        app.show_view("train")
        await pilot.pause()
        view = app.view("train")
        await one_step_run(pilot, view)
        await one_step_run(pilot, view)  # the first run's last grid beside this one's
        assert app.query_one("#tr-align-prev").display
        for size in SIZES:
            if size != tuple(app.size):
                await pilot.resize_terminal(*size)
                await pilot.pause()
            await _numbers_clear(pilot, size)


async def _numbers_clear(pilot, size: tuple[int, int]) -> None:
    app = pilot.app
    for _ in range(5):  # a small screen shows one panel at a time: l brings the alignment's
        if app.query_one("#tr-align-box").region.area:
            break
        await pilot.press("l")
        await pilot.pause()
    await wait_for(pilot, lambda: app.query_one("#tr-align-box").region.area > 0)
    await pilot.pause(0.3)
    if size[1] < 40:  # a small screen shows the one panel `l` brought, not the learning rate's beside it
        shown = [p.id for p in app.query(".tr-panel") if p.region.area]
        assert shown == ["tr-align-box"], f"{size}\n{screen_text(app)}"
    lines = panel_lines(app)
    width = len(lines[0])
    assert any("0.00" in line for line in lines), f"{size}\n{screen_text(app)}"  # the legends are on screen
    assert cut_numbers(lines, width) == [], f"{size}\n{screen_text(app)}"
    assert not [line for line in lines if re.search(r"\.\d\d\d\.\d", line)], f"{size}\n{screen_text(app)}"  # "1.000.00"
    # the read-out keeps its value (it lost it, "[0] 'ein' -> [0]…", in a half-panel 34 wide)
    value = app.query_one("#tr-align", Heatmap).describe_cursor().split(":")[-1].strip()
    assert any(value in line for line in lines), f"{size}\n{screen_text(app)}"


async def test_the_footer_keeps_the_views_keys_and_q_quit_with_a_grid_focused_at_80x24():
    """Focus on the alignment grid put its z and # on the footer beside the view's g and p: at 80x24 they ran
    together and pushed q quit off ('... f7 vie▏^p palette', the long tier's translator 80x24 walk at 74677e7).
    The grid's keys act all the same."""
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(80, 24)) as pilot:
        await view_mounted(pilot, "train")
        app.show_view("train")
        await pilot.pause()
        view = app.view("train")
        await one_step_run(pilot, view)
        for _ in range(5):
            if app.query_one("#tr-align-box").region.area:
                break
            await pilot.press("l")
            await pilot.pause()
        grid = app.query_one("#tr-align", Heatmap)
        grid.focus()
        await pilot.pause(0.3)
        footer = screen_lines(app)[-1]
        assert "q quit" in footer and "views" in footer and "g start" in footer, footer
        numbers = grid.numbers
        await pilot.press("number_sign")
        assert grid.numbers != numbers
