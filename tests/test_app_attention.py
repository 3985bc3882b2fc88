"""Attention view: grids with the input's shapes, hover names tokens, masks equal torch's, export."""

from __future__ import annotations

import json

import torch
from test_app_support import SIZE, app_for, wait_for, wait_ready
from textual.widgets import Input, Select, Static

from tui_lab.app import grids
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.model.masks import causal_mask, combine, key_padding, padding_mask
from tui_lab.model.positions import sinusoidal_table


def view(app):
    return app.view("attention")


async def captured(pilot, generation: int = 1) -> None:
    await wait_ready(pilot, generation)
    await wait_for(pilot, lambda: view(pilot.app).captured_generation >= generation and view(pilot.app).grids)
    await pilot.pause()


async def test_decoder_only_grids_are_square_per_layer_and_head():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        app.show_view("attention")
        await captured(pilot)
        n = len(grids.GPT_TEXT.split()) if hasattr(grids, "GPT_TEXT") else len(view(app).src)
        c = app.live.config
        assert sorted(view(app).grids) == [("decoder-self", i) for i in range(c.decoder_layers)]
        for heads in view(app).grids.values():
            assert len(heads) == c.heads and len(heads[0]) == n and len(heads[0][0]) == n
        assert app.query_one(Heatmap).shape == (n, n)
        # causal: nothing above the diagonal, rows sum to one
        grid = view(app).grids[("decoder-self", 0)][0]
        assert all(grid[q][k] == 0 for q in range(n) for k in range(q + 1, n))
        assert abs(sum(grid[-1]) - 1) < 1e-5
        app.query_one("#att-head", Select).value = 2
        await pilot.pause()
        assert "head 2" in str(app.query_one("#att-title").render())


async def test_cross_attention_is_target_by_source_and_hover_names_tokens(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        app.show_view("attention")
        await captured(pilot)
        v = view(app)
        src, tgt = v.src, v.tgt
        assert (len(src), len(tgt)) == (6, 7)
        kinds = {k for k, _ in v.grids}
        assert kinds == {"encoder-self", "decoder-self", "cross"}
        app.query_one("#att-kind", Select).value = "cross"
        await pilot.pause()
        heatmap = app.query_one(Heatmap)
        assert heatmap.shape == (7, 6)  # target x source, not square
        assert heatmap.row_labels == tgt and heatmap.col_labels == src
        # hover the cell of query 'gesehen' (row 6) and key 'seen' (column 2)
        x = heatmap.label_width + 2 * heatmap.cell_w  # content coordinates of that cell
        y = heatmap.header + 6
        await pilot.hover(Heatmap, offset=(x + heatmap.content_region.x - heatmap.region.x,
                                           y + heatmap.content_region.y - heatmap.region.y))
        await pilot.pause()
        info = str(app.query_one("#att-info", Static).render())
        assert "'gesehen'" in info and "'seen'" in info, info
        heatmap.focus()
        await pilot.press("e")
        await pilot.pause()
        files = list(tmp_path.glob("tui-lab-cross-*.json"))
        assert len(files) == 1
        data = json.loads(files[0].read_text())
        assert len(data["values"]) == 7 and len(data["values"][0]) == 6 and data["cols"] == src


async def test_long_input_is_cut_and_masks_draw():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        app.show_view("attention")
        await captured(pilot)
        words = " ".join(f"w{i}" for i in range(400))
        app.query_one("#att-src", Input).value = words
        view(app).action_run()
        limit = min(grids.MAX_TOKENS, app.live.config.max_len)
        await wait_for(pilot, lambda: len(view(app).src) == limit)
        await pilot.pause()
        heatmap = app.query_one(Heatmap)
        assert heatmap.shape == (limit, limit) and heatmap.dense
        for kind, rows in (("mask-causal", limit), ("mask-padding", 14), ("mask-both", 14)):
            app.query_one("#att-kind", Select).value = kind
            await pilot.pause()
            assert heatmap.shape[0] == rows
        app.query_one("#att-kind", Select).value = "pos-learned"
        await pilot.pause()
        assert heatmap.shape[1] == app.live.config.d_model


def test_pure_masks_equal_torch_masks():
    lengths = [len(s) for s in grids.SEED_BATCH]
    assert lengths == [4, 3, 1]
    keep = padding_mask(lengths)  # (N, L)
    assert keep.tolist() == grids.padding_keep(lengths)
    for causal in (False, True):
        expected = combine(key_padding(keep)[:, 0], causal_mask(4) if causal else None)  # (N, L, L)
        got = torch.tensor(grids.batch_grid(lengths, causal)).bool()
        assert torch.equal(got, expected.expand(3, 4, 4))
    assert torch.equal(torch.tensor(grids.causal_grid(5)).bool(), causal_mask(5))


def test_sinusoidal_grid_equals_the_model_table():
    ours = torch.tensor(grids.sinusoidal_grid(50, 16))
    assert torch.allclose(ours, sinusoidal_table(50, 16), atol=1e-5)


def test_hashed_tokens_are_stable():
    ids, labels = grids.tokenize("the cat the", vocab=100)
    assert ids[0] == ids[2] and labels == ["the", "cat", "the"] and all(0 <= i < 100 for i in ids)
    assert grids.hash_ids(["gesehen"], 37000) == grids.hash_ids(["gesehen"], 37000)


async def test_a_model_trained_on_a_task_brings_its_own_example_and_bos():
    from tui_lab.app.live_model import ModelReady
    from tui_lab.data.tasks import load_task
    from tui_lab.model import build_model
    from tui_lab.presets import load_preset

    task = load_task("numbers-de")
    tok = task.tokenizer
    config = load_preset("transformer-2017-toy", vocab=tok.vocab_size)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        example = ("three hundred twenty one", "drei hundert ein und zwanzig")
        app.post_message(ModelReady(config, build_model(config).eval(), tok, "cpu", "trained run #1", example))
        attention = app.view("attention")
        await wait_for(pilot, lambda: attention.src == ["three", "hundred", "twenty", "one"])
        await wait_for(pilot, lambda: attention.tgt[:2] == ["<bos>", "drei"])
        cross = attention.grids[("cross", 0)]
        assert (len(cross[0]), len(cross[0][0])) == (6, 4)  # heads' mean: target (bos + 5 words) x source (4)
