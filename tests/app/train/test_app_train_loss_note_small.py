"""Train's loss note at 80x24 and 100x30, read from the rendered screen (issue 36's crawler: at 100x30, as a
numbers-de run started, the note's second line, 'val loss: neither', sat below the pane's fold): every line of
the note is on screen, whatever the status above it takes, and no rule finds it cut."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import start_paused, stop, train_view
from screen_rules import text_problems


def _flat(lines: list[str]) -> str:
    return " ".join(" ".join(line.split()) for line in lines)


# numbers-de at both sizes in one app and one run, reached by resizing (the panes are laid out and drawn again).
@pytest.mark.parametrize(("preset", "sizes"), [
    ("gpt2-toy", [(80, 24)]),  # the status takes 4+ lines: the vocabulary note beside the parameters
    ("transformer-2017-toy-numbers-de", [(100, 30), (80, 24)]),
])
async def test_the_loss_note_is_whole_on_a_small_screen(preset, sizes):
    app = app_for("--preset", preset)
    async with app.run_test(size=sizes[0]) as pilot:
        await wait_ready(pilot)
        view = await train_view(pilot)
        await start_paused(pilot, view)
        note = app.query_one("#tr-loss-note")
        await wait_for(pilot, lambda: str(note.render()).strip(), 60)
        for size in sizes:
            if size != tuple(app.size):
                await pilot.resize_terminal(*size)
            # the 1 Hz status draw, or nothing left to draw: a paused run sends nothing more, and its one draw may
            # have come before this line on a loaded machine (CI waited 30 s for a second draw that never came)
            drawn = view.monitor.redraws
            await wait_for(pilot, lambda drawn=drawn: view.monitor.redraws > drawn or not view.dirty, 30)
            await pilot.pause()
            lines = screen_lines(app)
            said = " ".join(str(note.render()).split())
            r = note.region  # where the note is laid out: above the footer, every line of it read there
            assert r.area and r.bottom <= len(lines) - 1, f"{size}\n" + "\n".join(lines)
            assert _flat([line[r.x:r.right] for line in lines[r.y:r.bottom]]) == said, f"{size}\n" + "\n".join(lines)
            assert not [p for p in text_problems(app, lines) if "tr-loss-note" in p], size
        await stop(pilot, view)
