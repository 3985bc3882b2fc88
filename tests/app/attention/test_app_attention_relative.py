"""Attention view: a model with relative positions draws its T5 bias or Shaw's table over query x key positions,
the live model's own numbers (issue 27)."""

from __future__ import annotations

import torch
from app_support import SIZE, app_for, wait_for, wait_ready
from textual.widgets import Select

from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.model.relative import shaw_index


def view(app):
    return app.view("attention")


async def live_with(pilot, positions: str, generation: int):
    """The gpt2-toy shape with `positions`, installed as the live model; waits for its capture."""
    from tui_lab.app.live.model import ModelReady
    from tui_lab.model import build_model
    from tui_lab.presets import load_preset

    app = pilot.app
    config = load_preset("gpt2-toy", positions=positions, relative_clip=2)
    torch.manual_seed(0)
    model = build_model(config).eval()
    app.post_message(ModelReady(config, model, None, "cpu", f"preset gpt2-toy ({positions})"))
    await wait_for(pilot, lambda: view(app).captured_generation == generation and view(app).src)
    return model


async def test_the_relative_grids_are_the_live_models():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        for generation, (positions, kind) in enumerate([("t5", "pos-t5"), ("relative", "pos-relative")], start=2):
            await check_grid(pilot, positions, kind, generation)


async def check_grid(pilot, positions: str, kind: str, generation: int) -> None:
    app = pilot.app
    model = await live_with(pilot, positions, generation)
    attention = view(app)
    assert kind in attention.kinds()
    app.query_one("#att-kind", Select).value = kind
    await pilot.pause()
    n = len(attention.src)
    heatmap = app.query_one(Heatmap)
    assert heatmap.shape == (n, n)
    title = str(app.query_one("#att-title").render())
    at = torch.arange(n)
    if positions == "t5":
        app.query_one("#att-head", Select).value = 1
        await pilot.pause()
        shown = torch.tensor(attention.grids[(kind, 0)][1])
        table = model.decoder[0].attn.t5_bias.table.weight[:, 1]  # head 1's value per bucket
        assert shown[3, 0] == table[3] and shown[3, 3] == table[0]  # causal: distance d < 16 is bucket d
        bias = model.decoder[0].attn._position_bias(0, n, at, False)  # what attention adds, head 1
        assert torch.allclose(shown, bias[1], atol=1e-6)
        assert "T5 bias" in title and "head 1" in str(app.query_one("#att-title").render())
    else:
        layers = sorted(layer for k, layer in attention.grids if k == kind)
        assert layers == list(range(model.config.decoder_layers))
        norms = model.decoder[1].attn.shaw.keys.weight.norm(dim=-1)
        app.query_one("#att-layer", Select).value = 1
        await pilot.pause()
        shown = torch.tensor(attention.grids[(kind, 1)][0])
        assert torch.allclose(shown, norms[shaw_index(at, at, 2)], atol=1e-6)
        assert n > 4 and shown[n - 1, 0] == shown[n - 1, 1]  # past the clip (2) every distance reads one row
        assert "layer 1" in str(app.query_one("#att-title").render())
