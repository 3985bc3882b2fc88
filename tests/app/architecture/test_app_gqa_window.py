"""The app's side of grouped-query and local attention: KV cache per token for MHA / GQA / MQA in the
Architecture view, the sliding-window mask (and the window on attention grids) in the Attention view."""

from __future__ import annotations

from app_support import app_for, screen_text, wait_for, wait_ready
from textual.widgets import Button, Input, Label, Select, Static

from tui_lab.analysis.cost import kv_cache_variants
from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.views.attention.grids import Capture, Pattern, grid_spec
from tui_lab.presets import load_preset


async def test_architecture_shows_kv_cache_for_mha_gqa_mqa_at_80x24():
    app = app_for("--preset", "smollm2-135m", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "134,515,008" in str(app.query_one("#arch-total", Static).render())
        table = app.query_one("#arch-kv", Static)
        variants = kv_cache_variants(load_preset("smollm2-135m"))  # 9 / 3 / 1 kv heads

        def scrolled_to_the_table(*wanted: str) -> bool:
            # On a loaded machine the panel still lays out after the first pause: a scroll then stopped short.
            table.scroll_visible(animate=False)
            text = screen_text(app)
            return all(word in text for word in wanted)

        await wait_for(pilot, lambda: scrolled_to_the_table(
            *(fmt_bytes(size) for v in variants for size in (v.per_token, v.full))), 60)
        text = screen_text(app)
        assert "GQA *" in text and "MHA" in text and "MQA" in text, text  # * marks the config's own
        app.query_one("#f-kv_heads", Input).value = "9"  # the form follows: now MHA is ours
        await wait_for(pilot, lambda: scrolled_to_the_table("MHA *"), 60)
        app.query_one("#f-kv_heads", Input).value = "4"  # does not divide 9: one line, beside the field
        await pilot.pause()
        error = app.query_one("#e-kv_heads", Label)
        assert str(error.render()) == "kv_heads (4) must divide heads (9)" and error.display
        assert app.query_one("#apply", Button).disabled


def test_mask_view_counts_attended_pairs_and_marks_the_window():
    tokens = "a b c d e f".split()
    spec = grid_spec(Capture(), "mask-local", 0, -1, " ".join(tokens), 16, Pattern(3, 1))
    # rows see 1, 2, 3 keys, then 3 + the global one
    assert spec.title == "mask: 18 of 21 pairs (86%) vs full causal · this model: window 3 + 1 global"
    assert spec.mask[5] == [False, True, True, False, False, False]
    example = grid_spec(Capture(), "mask-local", 0, -1, " ".join(tokens), 16, Pattern(), causal=False)
    assert example.title.endswith("vs full bidirectional · example (this model attends fully): window 3 + 1 global")


async def test_attention_view_draws_the_live_window():
    app = app_for("--preset", "llama-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await pilot.pause()
        app.query_one("#att-kind", Select).value = "mask-local"
        await pilot.pause()
        assert "example (this model attends fully)" in app.query_one("AttentionView").current_spec().title
        assert "pairs (" in screen_text(app)
        app.rebuild_model(load_preset("llama-toy", attention_window=2))
        await wait_ready(pilot, 2)
        view = app.query_one("AttentionView")
        await wait_for(pilot, lambda: view.captured_generation >= 2 and view.grids)
        app.query_one("#att-kind", Select).value = "decoder-self"
        await pilot.pause()
        spec = view.current_spec()
        n = len(spec.values)
        assert n > 3 and spec.mask[n - 1][0] and not spec.mask[n - 1][n - 2]  # outside the window: masked
        app.query_one("#att-kind", Select).value = "mask-local"
        await pilot.pause()
        assert "vs full causal · this model: window 2" in view.current_spec().title
        assert "pairs" in screen_text(app)
