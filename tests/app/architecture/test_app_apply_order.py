"""Apply asks the right question in the right order: a config too big for memory is refused before any
question about losing learned weights, and weights already on disk (just saved, or loaded from a folder)
are replaced without "cancel and save it first", the notice saying where they stay. Read from the screen."""

from __future__ import annotations

from app_origin_support import _train_steps
from app_support import app_for, screen_text, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.app.modals.confirm_apply import ConfirmApply


def _notes(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


async def test_a_config_too_big_for_memory_is_refused_before_the_question_about_learned_weights():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")  # learned weights: an edited Apply would ask
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.query_one("#f-d_model", Input).value = "65536"  # hundreds of GiB of weights
        await pilot.pause()
        app.view("architecture").action_apply()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
        assert "save it first" not in screen_text(app)
        await wait_for(pilot, lambda: "GiB" in _notes(app))
        assert app.live.generation == 1 and app.live.origin.startswith("shipped")


async def test_weights_just_saved_or_loaded_from_a_folder_are_replaced_without_save_it_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await _train_steps(pilot, 2)
        view = app.view("train")
        app.query_one("#tf-folder", Input).value = str(tmp_path / "kept")
        view.action_save()
        await wait_for(pilot, lambda: "saved to" in screen_text(app), 60)
        await pilot.press("f1")
        generation = app.live.generation
        app.view("architecture").action_apply()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)  # on disk: nothing to lose, no question
        await wait_for(pilot, lambda: "the previous weights stay in kept" in _notes(app), 5)
        await wait_ready(pilot, generation + 1)
        # the same model loaded back from its folder: again no question
        await pilot.press("f4")
        await pilot.pause()
        view.action_load()
        await wait_for(pilot, lambda: app.live.origin.startswith("checkpoint") and not app.live.building, 60)
        await pilot.press("f1")
        app.view("architecture").action_apply()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
        assert "save it first" not in screen_text(app)
