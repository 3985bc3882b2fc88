"""Speed view on approximate self-attention: a Performer's decoding is measured with its running sums (the demo
model takes the live model's features); a Linformer encoder is told in one line why it has none, and the
Attention view draws its weights per position (softmax over projected rows times F^T), without an entropy."""

from __future__ import annotations

import torch
from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready
from textual.widgets import Input

from tui_lab import build_model
from tui_lab.checkpoint import save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data import char_tokenizer

PERFORMER = ModelConfig(d_model=32, heads=4, d_ff=64, vocab=32, max_len=64, dropout=0.0,
                        self_attention="performer", performer_features=16)
LINFORMER = ModelConfig(family="encoder-only", encoder_layers=1, decoder_layers=0, d_model=32, heads=4, d_ff=64,
                        vocab=32, max_len=64, dropout=0.0, self_attention="linformer", linformer_k=16)


def checkpoint(folder, config: ModelConfig):
    torch.manual_seed(0)
    save_checkpoint(folder, build_model(config), char_tokenizer("abcdefghijklmnopqrstuvwxyz ."))
    return str(folder)


async def test_a_performer_is_measured_with_its_running_sums(tmp_path):
    app = app_for("--checkpoint", checkpoint(tmp_path / "performer", PERFORMER))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")  # its demo box follows the live model once shown (view_activated)
        app.show_view("speed")
        await pilot.pause()
        view = app.view("speed")
        # narrower than the demo: the demo it measures is a Performer too (set as the tab's activation is handled)
        await wait_for(pilot, lambda: view.demo, 30)
        app.query_one("#sp-lengths", Input).value = "8"
        app.query_one("#sp-repeats", Input).value = "1"
        await pilot.press("r")
        await wait_for(pilot, lambda: not view.running and view.report is not None, 60)
        await pilot.pause()
        assert view.config.self_attention == "performer" and view.config.performer_features == 16
        assert all(run.identical for run in view.report.runs)  # cached (running sums) == uncached
        text = " ".join(screen_text(app).split())
        # 2 layers x 4 heads x m 16 x (D 32 + 1) x 4 B; exact: K and V x 2 layers x 4 heads x 32 x 24 tokens x 4 B
        assert "Performer (m=16): the cache is the running sums S, z, 16.5 KiB at any length" in text, text
        assert "exact attention's KV cache at 24 tokens: 48.0 KiB" in text


async def test_a_linformer_says_why_it_has_no_decoding_and_draws_its_weights_per_position(tmp_path):
    app = app_for("--checkpoint", checkpoint(tmp_path / "linformer", LINFORMER))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        await wait_for(pilot, lambda: "encoder self-attention (source x source) · layer 0" in screen_text(app))
        title = next(line for line in screen_text(app).splitlines() if "· layer 0 ·" in line)
        assert "8 x 8" in title and "entropy" not in title  # per position; signed weights: no entropy
        app.show_view("speed")
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: "has no decoding to measure" in screen_text(app), 60)
        assert "no causal form and no cache" in " ".join(screen_text(app).split())
        assert app.view("speed").report is None
        # r again draws the same line: each press also says so in a message, or the second reads as ignored
        notes = len(app._notifications)
        await pilot.press("r")
        await pilot.pause()
        said = [n.message for n in list(app._notifications)[notes:]]
        assert said == ["not run: Linformer has no decoding to measure"]
