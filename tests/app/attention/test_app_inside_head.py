"""Inside one head (`c` in the Attention view): the query under the cursor through q·k, √d_k, the mask, the
softmax and Σ p·v, read off the screen and checked against the grid's cell and the head's own output."""

from __future__ import annotations

import re

import pytest
import torch
from app_support import app_for, screen_text, wait_for, wait_ready
from textual.widgets import Select

from tui_lab.app.views.attention.inside_head import InsideHead, number
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.mechanism.cache import run_with_cache

STEPS = ("q·k", "÷ √", "mask", "softmax", "Σ p·v", "= grid", "= output")


async def opened(pilot, kind: str | None = None, head: int = 1) -> InsideHead:
    """The Attention view captured, `kind` and `head` picked, the panel open and drawn."""
    app = pilot.app
    app.show_view("attention")
    await wait_ready(pilot)
    view = app.view("attention")
    await wait_for(pilot, lambda: view.captured_generation >= 1 and view.grids)
    if kind:
        app.query_one("#att-kind", Select).value = kind
    app.query_one("#att-head", Select).value = head
    await pilot.pause()
    view.home().focus()
    await pilot.press("c")
    panel = app.query_one(InsideHead)
    await wait_for(pilot, lambda: panel.steps is not None)
    return panel


def hook_z(app, point: str, src: list[int], tgt: list[int] | None) -> torch.Tensor:
    """The head outputs of a pass of our own over the same inputs: (L, H, D)."""
    model = app.live.model.eval()
    inputs = (torch.tensor([src]),) if tgt is None else (torch.tensor([src]), torch.tensor([tgt]))
    with torch.no_grad():
        _, cache = run_with_cache(model, *inputs, names=[point])
    return cache[point][0]


def line(text: str, label: str) -> str:
    """The panel's row that starts with `label`, without the border."""
    return next(row for row in text.splitlines() if f"│ {label}" in row).strip().strip("│").strip()


async def test_causal_head_at_80x24_shows_each_step_and_ends_on_the_grid_cell_and_hook_z():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await opened(pilot)
        heatmap = app.query_one(Heatmap)
        assert not heatmap.display and app.focused is panel  # at 80x24 the panel stands in for the grid
        await pilot.press("down", "down", "down", "right")
        await wait_for(pilot, lambda: panel.steps.query == 3)
        text = screen_text(app)
        for label in STEPS:
            assert f"│ {label}" in text, (label, text)
        assert "inside head 1 · layer 0 · decoder self-attention" in text and "query [3]" in text
        # the cursor's key: its softmax written as the grid's own cell, under the causal mask
        cell = app.view("attention").grids[("decoder-self", 0)][1][3][1]
        assert f"softmax[1] {cell:.4f} = the grid's cell {cell:.4f}" in text
        assert line(text, "mask").split()[-2:] == ["-∞", "-∞"]  # keys 4.. lie in the future
        # Σ p·v on screen is the head's output from a pass of our own (hook_z)
        z = hook_z(app, "blocks.0.attn.hook_z", panel.inputs[1], None)[3, 1]
        shown = re.search(r"\[(.*?)(, …)?\]", line(text, "Σ p·v")).group(1).split(", ")
        assert shown == [number(v) for v in z[:len(shown)].tolist()] and len(shown) >= 4
        for row in text.splitlines():
            assert len(row.rstrip()) <= 80 and not re.search(r"\d…", row)  # no number cut
        await pilot.press("c")
        assert heatmap.display and not panel.display


async def test_grouped_query_head_names_its_shared_key_head_beside_the_grid_at_160x48():
    app = app_for("--preset", "llama-toy")
    async with app.run_test(size=(160, 48)) as pilot:
        panel = await opened(pilot, head=3)
        assert app.query_one(Heatmap).display  # room for both
        text = screen_text(app)
        assert "K, V: kv head 1 of 2, shared by heads 2-3" in text and "q·k (RoPE)" in text
        assert panel.steps.weight_error < 1e-5 and panel.steps.out_error < 1e-5


async def test_cross_and_encoder_self_attention_read_the_source():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await opened(pilot, kind="cross", head=2)
        view = app.view("attention")
        text = screen_text(app)
        assert "cross-attention" in text and "mask: none" in text
        assert line(text, "key").split()[1:] == view.src[:len(line(text, "key").split()) - 1]
        src, tgt = panel.inputs[1], panel.inputs[2]
        z = hook_z(app, "decoder.0.cross_attn.hook_z", src, tgt)[0, 2]
        assert panel.steps.out == pytest.approx(z.tolist(), abs=1e-5)
        assert panel.steps.weights == pytest.approx(view.grids[("cross", 0)][2][0], abs=1e-5)
        app.query_one("#att-kind", Select).value = "encoder-self"
        await wait_for(pilot, lambda: panel.steps is not None and panel.steps.kind == "encoder-self")
        assert "encoder self-attention" in screen_text(app) and panel.steps.weight_error < 1e-5


async def test_a_cursor_past_the_captured_text_is_said_not_a_crash():
    """The long tier's English 160x48 walk (seed 459744770) ended the app: a pane hidden put the inside-head panel
    back, pointed at the grid's cursor from before a shorter text's capture, and its key indexed past the trace's
    weights (IndexError in check_lines). The panel says so instead."""
    from tui_lab.app.views.attention.inside_head import Pointer

    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(160, 48)) as pilot:
        panel = await opened(pilot)
        p = panel.pointer
        keys = len(panel.steps.weights)
        panel.point(Pointer(p.kind, p.layer, p.head, p.query, keys + 5, p.rows, p.cols))
        await pilot.pause()
        assert f"the cursor's key {keys + 5} is past this text's {keys} keys" in screen_text(app)
        panel.point(p)  # the grid's own cursor again: drawn as before
        await pilot.pause()
        assert "= grid" in screen_text(app)
