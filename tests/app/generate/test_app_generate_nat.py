"""Generate view with a NAT model: its one-pass output says its passes and predicted length, a length field
overrides the classifier, and `v` puts it beside an AT model (the shipped numbers-de toy) on the same input,
read off the rendered screen at 80x24."""

from __future__ import annotations

import pytest
import torch
from app_support import app_for, screen_lines, wait_for
from textual.widgets import Input

from tui_lab import build_model
from tui_lab.app.views.generate.token_stream import TokenStream
from tui_lab.config import ModelConfig


@pytest.fixture(scope="module")
def nat_checkpoint(tmp_path_factory):
    from tui_lab.checkpoint import save_checkpoint
    from tui_lab.data.tasks import load_task

    tokenizer = load_task("numbers-de").tokenizer
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16, heads=2, d_ff=32,
                         vocab=tokenizer.vocab_size, max_len=12, decoder_mode="nat-length-classifier")
    torch.manual_seed(0)
    model = build_model(config)
    with torch.no_grad():  # the classifier says 3 tokens, whatever the source
        model.length_classifier.proj.weight.zero_()
        model.length_classifier.proj.bias.zero_()
        model.length_classifier.proj.bias[3] = 100.0
    folder = tmp_path_factory.mktemp("nat-app") / "ckpt"
    save_checkpoint(folder, model, tokenizer)
    return str(folder)


async def test_a_nat_model_beside_the_shipped_at_toy_at_80x24(nat_checkpoint):
    app = app_for("--checkpoint", nat_checkpoint)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.live.generation >= 1 and not app.live.building, timeout=180)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        assert view.has_class("-nat") and app.query_one("#gen-nat_length").display
        assert not app.query_one("#gen-beam_size").display  # one pass: nothing to search
        app.query_one("#gen-prompt", Input).value = "twenty one"
        app.query_one("#gen-temperature", Input).value = "0"
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        stream = app.query_one(TokenStream)
        assert len(stream.tokens) == 4  # three tokens and END
        text = "\n".join(screen_lines(app))
        assert "1 decoder pass" in text and "NAT, length 3" in text  # the note wraps before "predicted" at 80
        app.query_one("#gen-nat_length", Input).value = "5"
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        assert len(stream.tokens) == 6  # the person's length, not the classifier's
        view.action_versus()
        await wait_for(pilot, lambda: not view.running, timeout=60)
        await pilot.pause()  # the last result drawn: the job's end is posted before its boxes repaint
        lines = screen_lines(app)
        text = "\n".join(lines)
        assert "live: nat-length-classifier" in text and "vs: autoregressive" in text
        assert "1 decoder pass, " in text and "length 3 predicted, 5 decoded" in text
        assert "4 decoder passes, " in text  # the AT toy: one pass per token (three words and END)
        assert "einundzwanzig" in text.replace(" ", "")  # the trained AT toy translates it
