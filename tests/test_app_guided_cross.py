"""The cross_attention axis in the app (issue 27 item 5): a choice in the Architecture form, and the Attention
view's cross-attention grid naming its kind; a monotonic model's grid is its hard attention, each row saying
where a head stopped (Pilot, and the typing-speed walk at 80x24)."""

from __future__ import annotations

import pytest
import torch
from test_app_support import app_for, wait_for
from textual.widgets import Select

from tui_lab import build_model
from tui_lab.checkpoint import save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data.tasks import load_task


def monotonic_checkpoint(folder, positions: str = "sinusoidal") -> None:
    """A numbers-de model whose monotonic heads stop somewhere (random weights with r = 0.5 and wide queries)."""
    tokenizer = load_task("numbers-de").tokenizer
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16, heads=2,
                         d_ff=32, vocab=tokenizer.vocab_size, max_len=32, positions=positions,
                         cross_attention="monotonic")
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        model.decoder[0].cross.r.fill_(0.5)
        model.decoder[0].cross.q.weight.normal_(std=0.5)
    save_checkpoint(folder, model, tokenizer)


def test_the_train_views_alignment_names_a_guided_kind_beside_the_prior():
    from tui_lab.app.views.train.align import method_label

    assert method_label({"guided_attention": 0.0}, {"cross_attention": "monotonic"}) == "monotonic, guided 0"
    assert method_label({"guided_attention": 1.0}, {"cross_attention": "softmax"}) == "guided 1"


async def test_the_form_offers_the_axis_and_the_grid_names_monotonic_and_where_heads_stop(tmp_path):
    monotonic_checkpoint(tmp_path / "ckpt")
    app = app_for("--checkpoint", str(tmp_path / "ckpt"))
    async with app.run_test(size=(120, 40)) as pilot:
        # the app's own wait (30 s) is short for a checkpoint launch beside a busy shared CPU
        await wait_for(pilot, lambda: app.live.generation >= 1 and not app.live.building, timeout=90)
        choices = [value for _, value in app.query_one("#f-cross_attention", Select)._options]
        assert choices == ["softmax", "location-aware", "monotonic"]
        assert app.query_one("#f-cross_attention", Select).value == "monotonic"
        app.show_view("attention")
        view = app.view("attention")
        await wait_for(pilot, lambda: view.captured_generation >= 1 and ("cross", 0) in view.grids)
        app.query_one("#att-kind", Select).value = "cross"
        app.query_one("#att-head", Select).value = 1
        await pilot.pause()
        assert "monotonic: hard, forward only, every head" in str(app.query_one("#att-title").render())
        grid = view.grids[("cross", 0)][1]
        assert all(set(row) <= {0.0, 1.0} and sum(row) <= 1 for row in grid)
        stops = [row.index(1.0) for row in grid if 1.0 in row]
        assert stops and stops == sorted(stops)  # forward only
        from tui_lab.app.widgets.heatmap import Heatmap

        notes = app.query_one(Heatmap).row_notes
        assert any(n.startswith("stops at ") for n in notes)


@pytest.mark.walk
def test_walk_attention_view_names_the_monotonic_grid_and_k_reaches_the_t5_bias(walk, tmp_path):
    """One launch for two grids (the walks' minute is shared): the model has T5 positions too, so after the
    cross-attention grid `k` reaches the relative-position bias over query x key positions (issue 27)."""
    monotonic_checkpoint(tmp_path / "ckpt", positions="t5")
    w = walk("--checkpoint", str(tmp_path / "ckpt"))
    w.wait_for("ckpt", timeout=40)
    w.press("2")
    w.wait_for("encoder self", timeout=20)  # the task's held-out pair opens on the encoder's grid
    w.press("k", "k")  # encoder self -> decoder self -> cross-attention
    w.wait_for("monotonic: hard", timeout=10)
    w.press("Down")
    w.wait_for("heads stop", timeout=10)  # the read-out: how many heads stopped on this row
    w.press("k")  # cross-attention -> the T5 bias table
    w.wait_for("positions: T5 bias", timeout=10)
