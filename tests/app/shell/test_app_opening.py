"""What a person meets first: the Tour's words about the shipped English toy claim only what was measured
(a head is called a previous-token head only when it puts at least 0.5 on position i-1 over held-out text)."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_ready
from app_tour_support import go_to, open_tour

from tui_lab.app.examples import PREVIOUS_TOKEN_HEAD, previous_token_meta, previous_token_name


def test_the_name_follows_the_measured_score():
    assert previous_token_name({"score": PREVIOUS_TOKEN_HEAD}) == "previous-token head"
    assert previous_token_name({"score": 0.10}) != "previous-token head"


async def test_the_tour_does_not_call_the_shipped_toys_best_head_a_previous_token_head():
    meta = previous_token_meta()
    assert meta["score"] < PREVIOUS_TOKEN_HEAD  # the shipped toy as measured: 0.10 on i-1 (uniform 0.035)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(100, 40)) as pilot:  # the words above the picture: read as one text
        await wait_ready(pilot)
        tour = await open_tour(pilot)
        await go_to(pilot, tour, 2)
        text = " ".join(" ".join(screen_lines(app)).split())
        assert "Self-attention" in text
        assert "previous-token head:" not in text and "(previous-token head)" not in text
        assert "yet is no previous-token head" in text and f"{meta['score']:.2f} mean weight" in text
        assert f"layer {meta['layer']} head {meta['head']} (most on the token before)" in text
