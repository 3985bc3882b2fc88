"""Train form: a checkbox reads on or off at a glance; the tokenizer shown is the one the run uses; a long run
asks first with its ETA; a task's vocabulary replacing the preset's is said with both parameter counts."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from app_train_support import start_paused, train_view
from textual.widgets import Select

from tui_lab.analysis import count_params
from tui_lab.app.modals.confirm_run import ConfirmLongRun
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.presets import load_preset


def _row(app, words: str) -> str:
    return next(line for line in screen_lines(app) if words in line)


async def test_checkbox_glyph_differs_and_the_task_tokenizer_is_shown():
    app = app_for("--preset", "transformer-2017-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await train_view(pilot)
        box = app.query_one("#tf-continue", OnOffCheckbox)
        off = _row(app, "continue live")
        box.value = True
        await pilot.pause()
        on = _row(app, "continue live")
        assert "✔" in on and "✔" not in off and "X" not in off, (off, on)
        app.query_one("#tf-data", Select).value = "numbers-de"
        await pilot.pause()
        await pilot.pause()
        tokenizer = _row(app, "tokenizer")
        assert "words" in tokenizer and "char" not in tokenizer


async def test_a_long_run_asks_first_with_its_eta():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await train_view(pilot, steps="2000000", batch_size="32", seq_len="128")
        view.action_start()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmLongRun), 60)
        await wait_for(pilot, lambda: "will take about" in screen_text(app))  # the modal's first frame
        text = " ".join(screen_text(app).split())
        assert "will take about" in text and ("min" in text or " h " in text) and "GFLOP/s" in text
        assert view.session.paused and not view.store.current.train_loss  # nothing trained while it asks
        await pilot.press("escape")
        await wait_for(pilot, lambda: not view.training, 60)
        assert not view.store.current.train_loss and "cancelled" in view.message


async def test_a_short_run_starts_and_a_task_vocabulary_swap_is_said():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        preset = load_preset("transformer-2017-toy", vocab=300)  # the toy's own vocab is the task's
        await wait_ready(pilot)
        app.rebuild_model(preset)
        await wait_ready(pilot, generation=2)
        view = await train_view(pilot)
        app.query_one("#tf-data", Select).value = "numbers-de"
        await pilot.pause()
        await start_paused(pilot, view)
        assert not isinstance(app.screen, ConfirmLongRun)
        trained = view.session.run_config
        before, after = count_params(preset).total, count_params(trained).total
        assert before != after
        assert f"{before:,} -> {after:,}" in view.message and "word vocabulary" in view.message
        view.action_stop()
        await wait_for(pilot, lambda: not view.training, 60)
