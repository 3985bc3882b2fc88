"""Architecture view, Layer tab: the live model's FFN as one matrix when it has no activation (issue 13)."""

from __future__ import annotations

from types import SimpleNamespace

from app_support import SIZE, app_for, wait_for, wait_ready

from tui_lab.app.views.architecture.ffn_rank import FFNRankNote
from tui_lab.model import build_model
from tui_lab.presets import load_preset


def note_text(app) -> str:
    return str(app.query_one(FFNRankNote).render())


async def test_layer_tab_shows_the_equivalent_matrix_rank():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        view = app.view("architecture")
        view.show_tab("arch-layer")
        await wait_for(pilot, lambda: "relu between up and down" in note_text(app))
        # a live model without activation and a d_ff below d_model: rank <= min(E, F) = 32
        model = build_model(load_preset("transformer-2017-toy", activation="none", d_ff=32))
        app.query_one(FFNRankNote).show(SimpleNamespace(model=model))
        await wait_for(pilot, lambda: "one linear map" in note_text(app))
        text = note_text(app)
        assert "encoder 0: W' 128x128, rank 32 (at most min(E, F) = 32)" in text and "decoder 1" in text
