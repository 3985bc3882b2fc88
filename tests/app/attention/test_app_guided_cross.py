"""The cross_attention axis in the app (issue 27 item 5): a choice in the Architecture form, and the Attention
view's cross-attention grid naming its kind; a monotonic model's grid is its hard attention, each row saying
where a head stopped (Pilot; the typing-speed walk at 80x24 is tests/walk/test_walk_guided_cross.py)."""

from __future__ import annotations

from app_support import app_for, wait_for
from cross_attention_fixtures import monotonic_checkpoint
from textual.widgets import Select


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
