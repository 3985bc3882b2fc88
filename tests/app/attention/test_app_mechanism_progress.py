"""The mechanism panels' progress (issue 36 item 23): an ablation on transformer-2017-base sat at 0% with no word
for over 15 s, then jumped to 65%, with no time left shown. Now the summary names each step before the passes
(the model's copy, the thread count, the clean pass) and then counts the passes with the time left, read from
the screen while the job is held at each point."""

from __future__ import annotations

import threading

import pytest
from app_support import app_for, screen_text, wait_for, wait_ready

from tui_lab.app.widgets.mechanism_panel import fmt_left
from tui_lab.mechanism import readouts


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")


def flat(app) -> str:
    return " ".join(screen_text(app).split())


async def test_ablation_names_its_first_steps_then_counts_passes_with_the_time_left(monkeypatch):
    held_before, go_on = threading.Event(), threading.Event()
    held_in, go_end = threading.Event(), threading.Event()
    real = readouts.head_ablation

    def held(model, ids, mode, on_step, **kwargs):
        held_before.set()
        go_on.wait(30)  # before any pass: the copy and the clean pass are under way

        def step(done, total):
            on_step(done, total)
            if done == 3:
                held_in.set()
                go_end.wait(30)

        return real(model, ids, mode, on_step=step, **kwargs)

    monkeypatch.setattr(readouts, "head_ablation", held)
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await pilot.pause()
        await pilot.press("m", "a")
        first = "the clean pass, then one pass per head"  # the last step before the passes
        await wait_for(pilot, lambda: held_before.is_set() and first in flat(app), 60)
        assert "x cancels" in flat(app)
        go_on.set()
        await wait_for(pilot, lambda: held_in.is_set() and "3/" in flat(app), 60)
        said = flat(app)
        total = app.live.config.heads * app.live.config.layers  # decoder-only: one row of heads a layer
        assert f"3/{total}" in said and " left" in said and "about" in said, said
        go_end.set()
        await wait_for(pilot, lambda: "ablated: loss" in screen_text(app), 60)


def test_time_left_reads_in_seconds_then_minutes():
    assert [fmt_left(s) for s in (0.4, 12.6, 65, 600)] == ["0 s", "13 s", "1 min 05 s", "10 min 00 s"]
