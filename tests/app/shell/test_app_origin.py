"""Where the weights came from: one description, in the header on every view and in the attention grid's title;
Apply on learned weights asks first, on random weights it does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_origin_support import _train_steps
from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from textual.widgets import Button, Input, Label

from tui_lab.app.modals.confirm_apply import ConfirmApply
from tui_lab.app.origin import describe_origin, short_path, task_label, trained_origin


@pytest.mark.parametrize("origin,kind,text", [
    ("preset gpt2-toy", "random", "random weights: gpt2-toy"),
    ("preset transformer-2017-toy (tour)", "random", "random weights: transformer-2017-toy"),
    ("config custom (from gpt2-toy)", "random", "random weights: custom (from gpt2-toy)"),
    (trained_origin(2, 200, "numbers-de"), "trained", "trained here: numbers-de, 200 steps"),
    (trained_origin(1, 1, task_label(None, "my, (odd).txt")), "trained", "trained here: text my, (odd).txt, 1 step"),
    ("trained run #3 (step 40)", "trained", "trained here: 40 steps"),
    ("hf /x/hub/models--openai-community--gpt2/snapshots/0a1b", "hf", "Hugging Face: openai-community/gpt2"),
    ("hf gpt2", "hf", "Hugging Face: gpt2"),
    ("shipped gpt2-toy-english", "shipped", "shipped toy: gpt2-toy-english"),
    ("something new", "other", "something new"),
])
def test_every_origin_reads_as_kind_and_detail(origin, kind, text):
    described = describe_origin(origin)
    assert (described.kind, described.text) == (kind, text)
    assert described.learned == (kind != "random")
    assert described.lead in text


def test_folders_read_as_typed_and_shipped_toys_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert describe_origin(f"checkpoint {tmp_path / 'runs' / 'run-1'}").text == "checkpoint: runs/run-1"
    deep = "/srv/" + "/".join(f"folder{i}" for i in range(9)) + "/run-7"
    assert short_path(deep).endswith("/run-7") and short_path(deep).startswith("…") and len(short_path(deep)) == 30
    import tui_lab

    shipped = Path(tui_lab.__file__).parent / "shipped" / "gpt2-toy-english"
    assert describe_origin(f"checkpoint {shipped}").text == "shipped toy: gpt2-toy-english"


def _header(app) -> str:
    return screen_lines(app)[0]




async def test_random_then_trained_then_apply_asks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert "tui-lab — random weights: gpt2-toy · cpu" in _header(app)  # whole, at 80 columns
        # Apply on random weights: no question, a new model
        app.view("architecture").action_apply()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
        await wait_ready(pilot, generation=2)
        # a few steps in the Train view: every view's header says so
        await _train_steps(pilot, 3)
        assert "tui-lab — trained here: built-in text, 3 steps · cpu" in _header(app)
        for key in ("f1", "f2", "f5"):
            await pilot.press(key)
            await pilot.pause()
            assert "trained here: built-in text, 3 steps" in _header(app), key
        # the Attention grid's title says whose weights drew it
        await pilot.press("f2")
        title = app.query_one("#att-title", Label)
        await wait_for(pilot, lambda: "trained here" in str(title.render()), 60)
        await pilot.pause()
        assert any(line.strip().startswith("trained here · decoder") for line in screen_lines(app))  # not cut off
        # Apply now warns; Cancel keeps the trained model
        await pilot.press("f1")
        generation = app.live.generation
        app.query_one("#apply", Button).press()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApply)
        text = screen_text(app)
        assert "trained here: built-in text, 3 steps" in text and "random weights" in text
        assert "Apply anyway" in text and "Cancel" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply) and app.live.generation == generation
        assert app.live.origin.startswith("trained")
        # Apply anyway: a random model again, and the header says so
        app.query_one("#apply", Button).press()
        await pilot.pause()
        await pilot.press("y")
        await wait_ready(pilot, generation + 1)
        assert describe_origin(app.live.origin).kind == "random"
        assert "random weights: gpt2-toy" in _header(app)


async def test_a_checkpoint_says_its_folder(tmp_path, monkeypatch):
    from tui_lab import build_model
    from tui_lab.checkpoint import save_checkpoint
    from tui_lab.data.tokenizers import char_tokenizer
    from tui_lab.presets import load_preset

    monkeypatch.chdir(tmp_path)
    tokenizer = char_tokenizer("hello world")
    config = load_preset("gpt2-toy", vocab=tokenizer.vocab_size, layers=1, d_model=32, heads=2, d_ff=64)
    save_checkpoint(tmp_path / "ck" / "small", build_model(config), tokenizer)
    app = app_for("--checkpoint", str(tmp_path / "ck" / "small"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert "tui-lab — checkpoint: ck/small · cpu" in _header(app)
        app.view("architecture").action_apply()  # loaded weights stay in their folder: no question
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
        assert any("the previous weights stay in ck/small" in str(n.message) for n in app._notifications)


async def test_a_shipped_toy_says_so_and_asks_only_when_edited():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert "tui-lab — shipped toy: transformer-2017-toy-numbers-de · cpu" in _header(app)
        preset = next(line for line in screen_lines(app) if "transformer-2017-toy-numbers-de" in line[:36])
        assert "transformer-2017-toy-numbers-de" in preset  # the preset select shows the whole name
        app.view("architecture").action_apply()  # the same toy again: nothing to rebuild, and it says so
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
        assert any("nothing changed" in str(n.message) for n in app._notifications)
        assert app.live.generation == 1
        app.query_one("#f-d_model", Input).value = "64"  # an edited copy is a new, random model: ask
        await pilot.pause()
        app.view("architecture").action_apply()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApply)
        assert "shipped toy: transformer-2017-toy-numbers-de" in screen_text(app)
        assert "random weights" in screen_text(app)
