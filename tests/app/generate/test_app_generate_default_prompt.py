"""Generate's default prompt follows the live model's task (issue 36 item 5): after an in-app numbers-de run the
prompt read "I have seen the film today", six <unk> columns and "fünfzig", with no warning. Now the prompt starts
as a held-out source of the task the model learned, and a prompt the tokenizer lacks words of says so."""

from __future__ import annotations

from dataclasses import replace

from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.app.examples import SOURCE_TEXT, TOY_DE
from tui_lab.app.live.model import ModelReady
from tui_lab.data.tasks import load_task
from tui_lab.loading import load_model

# The Train view's alignment example: the longest held-out source in tokens (train/watch.alignment_example)
TASK = load_task("numbers-de")
SOURCE, TARGET = TASK.examples("val")[max(range(len(TASK.val)), key=lambda i: len(TASK.val[i][0]))]


async def live_numbers_model(pilot, example: tuple[str, str] | None, origin: str):
    """A numbers-de translator goes live as an in-app run's does (not named as the shipped toy: the run's config
    is its own), with or without the run's held-out example; the Generate view once it follows it."""
    app = pilot.app
    await wait_ready(pilot)
    app.show_view("generate")
    view = await view_mounted(pilot, "generate")
    loaded = load_model("preset", TOY_DE, "cpu")
    config = replace(loaded.config, name="transformer-2017-toy")
    app.post_message(ModelReady(config, loaded.model, loaded.tokenizer, "cpu", origin, example))
    await wait_ready(pilot, generation=2)
    return view


async def test_after_an_in_app_run_the_prompt_is_a_held_out_source_of_its_task():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await live_numbers_model(pilot, (SOURCE, TARGET), "run #1 (numbers-de), step 100")
        await pilot.pause(0.5)
        text = "\n".join(screen_lines(app))
        assert SOURCE[:12] in text and SOURCE_TEXT[:12] not in text, text
        assert "<unk>" not in text
        view.home().focus()
        await pilot.press("g")
        await pilot.pause(0.3)
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause(0.3)
        text = "\n".join(screen_lines(app))
        assert "tokens in" in text and "<unk>" not in text, text


async def test_a_checkpoint_of_a_task_finds_its_own_source_and_unknown_words_are_named():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await live_numbers_model(pilot, None, "checkpoint runs/x")
        prompt = app.query_one("#gen-prompt", Input)
        await wait_for(pilot, lambda: prompt.value == SOURCE)  # found in a worker: the task whose tokenizer it is
        await pilot.pause(0.3)
        assert "<unk>" not in "\n".join(screen_lines(app))
        prompt.value = "I have seen the film today"  # typed: kept, and its unknown words named
        await pilot.pause(0.3)
        note = " ".join(" ".join(screen_lines(app)).split())
        assert "read <unk>" in note and "tokenizer lacks them" in note, note
        view.home().focus()
        await pilot.press("g")
        await pilot.pause(0.3)
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause(0.3)
        said = " ".join(" ".join(screen_lines(app)).split())
        assert "tokenizer lacks them" in said, said  # the note stays over the completion
