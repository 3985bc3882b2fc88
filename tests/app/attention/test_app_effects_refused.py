"""Attention's a and d where they do not apply, read from the rendered screen (issue 36 item 11): on an
encoder-decoder, d's refusal is whole, the ablation grid shown before goes, and d is named nowhere."""

from __future__ import annotations

from app_support import app_for, screen_text, wait_for, wait_ready


async def test_d_on_an_encoder_decoder_says_why_whole_and_clears_the_old_grid():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await wait_for(pilot, lambda: "a ablate" in screen_text(app))
        assert "DLA" not in screen_text(app) and "attribution" not in screen_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: "mean ablation" in screen_text(app) and "dec L1 cross" in screen_text(app))
        assert "attribution" not in screen_text(app)  # the panel's own line names no d either
        await pilot.press("d")
        await wait_for(pilot, lambda: "a ablates each of its heads instead" in screen_text(app), timeout=20)
        text = screen_text(app)
        assert "covers decoder-only language models" in text, text
        assert "mean ablation" not in text and "dec L1 cross" not in text, text  # the ablation grid went
        assert "query [" in text, text  # the attention grid is back
        before = len(app._notifications)
        await pilot.press("d")  # said again: the line cannot change, so a notification shows the press landed
        await wait_for(pilot, lambda: len(app._notifications) > before, timeout=5)
        assert "covers decoder-only language models" in screen_text(app)
