"""`v` (side by side, a hidden key) on a model it does not apply to: a plain refusal naming the live model's family,
not an error toast; nothing runs and the live model stays. (run_test draws no toasts: the notification is read.)"""

from __future__ import annotations

from app_support import app_for, view_mounted, wait_for, wait_ready


async def test_v_on_a_decoder_only_model_says_why_plainly():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("5")
        view = await view_mounted(pilot, "generate")
        live = app.live.model
        await pilot.press("v")
        await wait_for(pilot, lambda: bool(app._notifications))
        notes = list(app._notifications)
        assert [n.severity for n in notes] == ["information"]
        assert "decoder-only" in notes[0].message and notes[0].title == "side by side"
        assert not view.running and app.live.model is live
