"""Attention view: grids with the input's shapes, hover names tokens, masks equal torch's, export."""

from __future__ import annotations

import json

import torch
from app_support import SIZE, app_for, wait_for, wait_ready
from screen_reader import Screen, find_columns, find_rows, read_svg, slot_colours
from textual.widgets import Input, Select

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


async def screen(app, size) -> Screen:
    return read_svg(app.export_screenshot(), *size)


async def test_cross_attention_is_target_by_source_and_hover_names_tokens(tmp_path, monkeypatch):
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path / "exports"))
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
        # rows name the token each query predicts (teacher forcing), so 'gesehen' is the row that predicts it
        assert heatmap.row_labels == tgt[1:] + ["<eos>"] and heatmap.col_labels == src
        # hover where the screen shows row 'gesehen' and column 'seen'
        shot = await screen(app, SIZE)
        cols = find_columns(shot, src)
        ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
        x, y = cols.x0 + 2 * cols.slot + cols.slot // 2, ys[5]
        await pilot.hover(offset=(x, y))
        await pilot.pause()
        text = (await screen(app, SIZE)).text()
        assert "'gesehen'  ->  key [2] 'seen'" in text and "decoder input 'Film'" in text, text
        heatmap.focus()
        await pilot.press("e")
        await pilot.pause()
        files = list((tmp_path / "exports").glob("tui-lab-cross-*.json"))
        assert len(files) == 1
        assert any(str(files[0]) in str(n.message) for n in app._notifications)
        data = json.loads(files[0].read_text())
        assert len(data["values"]) == 7 and len(data["values"][0]) == 6 and data["cols"] == src


# One app for the three sizes, reached by resizing: each size's grid is laid out and drawn again at that size.
async def test_every_grid_sits_under_its_labels_on_screen():
    """Read from the SVG export: each column's slot is one colour (or hatched) under its label."""
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_view("attention")
        await captured(pilot)
        heatmap = app.query_one(Heatmap)
        for size in ((80, 24), (120, 40), (200, 60)):
            if size != tuple(app.size):
                await pilot.resize_terminal(*size)
            for kind in ("cross", "decoder-self", "encoder-self", "mask-both"):
                app.query_one("#att-kind", Select).value = kind
                await pilot.pause()
                shot = await screen(app, size)
                where = f"{size} {kind}"
                cols = find_columns(shot, heatmap.col_labels)
                assert cols is not None, f"{where}: column labels not found in slots\n" + shot.text()
                ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
                seen = [(r, y) for r, y in enumerate(ys) if y >= 0 and heatmap.row_labels[r]]  # "": a separator
                assert seen, f"{where}: no row label on screen\n" + shot.text()
                for r, y in seen:
                    for j, colours in enumerate(slot_colours(shot, y, cols, len(heatmap.col_labels))):
                        hatch = "╱" in "".join(shot.chars[y][cols.x0 + j * cols.slot:cols.x0 + (j + 1) * cols.slot])
                        assert len(colours) == 1, f"{where} row {r} column {j}: {colours}\n" + shot.text()
                        assert hatch == (colours == {shot.base}), f"{where} row {r} column {j}\n" + shot.text()
                if kind == "decoder-self":
                    assert "masked" in shot.text()  # the legend names the hatch


async def test_inputs_are_labelled_and_a_small_grid_fills_its_box_at_80x24():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_view("attention")
        await captured(pilot)
        shot = await screen(app, (80, 24))
        line = next(shot.line(y) for y in range(shot.height) if "source" in shot.line(y))
        assert line.index("source") < line.index("I have") < line.index("target") < line.index("<bos>"), line
        cols = find_columns(shot, view(app).src)
        assert cols.slot * 6 >= 36, shot.text()  # six columns use more than half the width


async def test_numbers_toggle_writes_each_weight_in_its_cell():
    size = (200, 60)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=size) as pilot:
        app.show_view("attention")
        await captured(pilot)
        app.query_one("#att-kind", Select).value = "cross"
        await pilot.pause()
        heatmap = app.query_one(Heatmap)
        heatmap.focus()
        await pilot.press("#")
        await pilot.pause()
        shot = await screen(app, size)
        cols = find_columns(shot, heatmap.col_labels)
        ys = find_rows(shot, heatmap.row_labels, cols.x0, cols.y + 1)
        for r in (1, 4):
            for c in range(6):
                cell = "".join(shot.chars[ys[r]][cols.x0 + c * cols.slot:cols.x0 + (c + 1) * cols.slot])
                assert f"{heatmap.values[r][c]:.2f}" in cell, (r, c, cell)


async def test_model_view_shows_every_layer_and_head_with_its_entropy_and_opens_one():
    app = app_for("--preset", "gpt2-toy")
    size = (120, 40)
    async with app.run_test(size=size) as pilot:
        app.show_view("attention")
        await captured(pilot)
        c = app.live.config
        app.query_one(Heatmap).focus()
        await pilot.press("m")
        await pilot.pause()
        text = (await screen(app, size)).text()
        assert all(f"L{i}" in text for i in range(c.decoder_layers)) and all(f"H{h}" in text for h in range(c.heads))
        for layer in (0, c.decoder_layers - 1):
            w = torch.tensor(view(app).grids[("decoder-self", layer)])  # (H, L, L)
            entropy = -(w * w.clamp_min(1e-12).log()).sum(-1).mean(-1)
            for value in entropy.tolist():
                assert f"{value:.2f}" in text
        await pilot.press("down", "right", "enter")
        await pilot.pause()
        assert app.query_one(Heatmap).display and "layer 1 · head 1" in str(app.query_one("#att-title").render())


async def test_a_loaded_checkpoint_reads_its_own_data_not_unk():
    from tui_lab.app.live.model import ModelReady
    from tui_lab.data.tasks import load_task
    from tui_lab.model import build_model
    from tui_lab.presets import load_preset

    tok = load_task("numbers-de").tokenizer
    config = load_preset("transformer-2017-toy", vocab=tok.vocab_size)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        app.post_message(ModelReady(config, build_model(config).eval(), tok, "cpu", "checkpoint runs/nd"))
        attention = view(app)
        await wait_for(pilot, lambda: attention.captured_generation == 2 and attention.src)
        assert "<unk>" not in attention.src + attention.tgt
        assert not tok.unknown(app.query_one("#att-src", Input).value)


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
    from tui_lab.app.live.model import ModelReady
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


async def test_the_default_launch_opens_on_the_shipped_toys_previous_token_head():
    """No --preset: the shipped trained English toy, the tour's sentence, and the head its meta.json names,
    whose weight sits on the previous token: the first look at attention shows something learned."""
    from tui_lab.app.examples import ENGLISH_SENTENCE, TOY_EN, previous_token_meta
    from tui_lab.app.views.generate.live import DEFAULT_PROMPT
    from tui_lab.shipped import shipped_meta

    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.show_view("attention")
        await captured(pilot)
        assert app.live.origin == f"shipped {TOY_EN}" and "shipped toy" in app.sub_title
        v = view(app)
        assert v.query_one("#att-src", Input).value == ENGLISH_SENTENCE and "<unk>" not in v.src
        meta = previous_token_meta()
        assert v.choice() == ("decoder-self", meta["layer"], meta["head"])
        title = str(app.query_one("#att-title").render())
        assert f"layer {meta['layer']} · head {meta['head']}" in title and "shipped toy" in title
        grid = v.grids[("decoder-self", meta["layer"])][meta["head"]]
        previous = [max(range(q + 1), key=grid[q].__getitem__) == q - 1 for q in range(1, len(grid))]
        assert sum(previous) > len(previous) / 2, grid  # most rows look hardest one token back

        def on_previous(g):  # mean weight on position i-1 over this sentence
            return sum(g[q][q - 1] for q in range(1, len(g))) / (len(g) - 1)

        others = [on_previous(g) for (_, layer), heads in v.grids.items() for h, g in enumerate(heads)
                  if (layer, h) != (meta["layer"], meta["head"])]
        assert on_previous(grid) > max(others)  # of every head, the one opened looks back the most
        # Generate's default prompt is one meta.json shows this toy continuing with words
        assert DEFAULT_PROMPT in shipped_meta(TOY_EN)["shipped"]["measured"]["samples"]
        assert app.view("generate").query_one("#gen-prompt", Input).value == DEFAULT_PROMPT
