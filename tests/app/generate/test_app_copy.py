"""The Generate view with a copy model: a copied name reads as itself, each row is the copy distribution
over the source, labelled with its token's p_gen (read off the rendered screen at 80x24)."""

from __future__ import annotations

import torch
from app_support import app_for, screen_text, wait_for, wait_ready
from textual.widgets import Input

from tui_lab import build_model
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.checkpoint import save_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.data.tasks import load_task


def copying_checkpoint(folder) -> None:
    """A names-task model whose gate always copies (p_gen = sigmoid(-30)): what it emits is a source word."""
    tokenizer = load_task("names").tokenizer
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16, heads=2,
                         d_ff=32, vocab=tokenizer.vocab_size, max_len=32, positions="sinusoidal", copy=True)
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        model.copy_gate.gate.weight.zero_()
        model.copy_gate.gate.bias.fill_(-30.0)
    save_checkpoint(folder, model, tokenizer)


async def test_generate_shows_the_copied_name_and_p_gen_per_token(tmp_path):
    copying_checkpoint(tmp_path / "ckpt")
    app = app_for("--checkpoint", str(tmp_path / "ckpt"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        for name, value in (("prompt", "zorblax"), ("max_new_tokens", "3"), ("temperature", "0")):
            app.query_one(f"#gen-{name}", Input).value = value
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        await pilot.pause()
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.col_labels == ["zorblax"]  # the source word, not <unk>
        assert heatmap.row_labels == ["zorblax 0.00"] * 3  # each new token copied: p_gen 0.00
        text = screen_text(app)
        assert "zorblax zorblax zorblax" in text and "zorblax 0.00" in text, text
        assert "copy: (1-p_gen)" in text, text
