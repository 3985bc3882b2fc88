"""^s and ^r on a form that matches the live model say so (issue 36's crawler: they said nothing), and act
once the form differs."""

from __future__ import annotations

from app_support import app_for, wait_for, wait_ready
from textual.widgets import Input


def notes(app) -> str:
    return " ".join(str(n.message) for n in app._notifications)


async def test_apply_and_reset_on_an_unchanged_form_say_nothing_changed():
    app = app_for()  # the shipped English toy
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("1")
        view = app.view("architecture")
        await wait_for(pilot, lambda: view.form_config == app.live.config, 30)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "nothing changed" in notes(app), 30)  # run_test draws no toasts
        assert "the model already matches the form" in notes(app) and app.live.generation == 1
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "nothing to reset" in notes(app), 30)
        field = app.query_one("#f-d_model", Input)
        field.value = "64"  # an edit: ^r brings the live model's value back, with no note
        await pilot.pause()
        before = notes(app).count("nothing to reset")
        await pilot.press("escape", "ctrl+r")
        await wait_for(pilot, lambda: field.value == "128", 30)
        assert notes(app).count("nothing to reset") == before


async def test_apply_of_a_new_shape_over_random_weights_says_so():
    """Over random weights nothing learned is lost, so ^s builds with no question; the numbers beside the form
    already showed the new shape and the header read "random weights" before and after: it said nothing (the
    long tier's walk on a Hugging Face folder)."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        await pilot.press("1")
        view = app.view("architecture")
        await wait_for(pilot, lambda: view.form_config == app.live.config, 30)
        app.query_one("#f-d_model", Input).value = "48"
        await wait_for(pilot, lambda: view.form_config is not None and view.form_config.d_model == 48, 30)
        await pilot.press("escape", "ctrl+s")
        await wait_for(pilot, lambda: "builds with random weights" in notes(app), 30)
        await wait_ready(pilot, 2)
        assert app.live.config.d_model == 48
