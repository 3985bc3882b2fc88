"""Train `w` on a random preset (nothing trained, no tokenizer) when the form's folder already holds a checkpoint:
one line says there is nothing to save, and no question comes first (the crawler, in a folder where an earlier
run had saved, answered "replace it?" with yes and the app ended with a traceback: the refusal was raised from
the question's answer, where nothing catches it)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import train_view

from tui_lab.checkpoint_files import REQUIRED


async def test_w_with_nothing_to_save_says_so_without_asking_to_replace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "runs" / "run-1"  # the form's default folder, a checkpoint from an earlier session
    folder.mkdir(parents=True)
    for name in REQUIRED:
        (folder / name).write_text("{}")
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await train_view(pilot, {})
        await pilot.press("w")
        await wait_for(pilot, lambda: any("nothing to save" in n.message for n in app._notifications))
        await pilot.pause()
        assert len(app.screen_stack) == 1, "\n".join(screen_lines(app))  # no "replace it?" asked
        await pilot.press("y", "enter")  # what a person answering a question would press: nothing to answer
        await pilot.pause()
        assert app.is_running and "Step n" in "\n".join(screen_lines(app))
        assert sorted(p.name for p in folder.iterdir()) == sorted(REQUIRED)  # untouched
