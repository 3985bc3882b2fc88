"""Launch: flags, refusals with one line and exit 2, no torch before the first frame, memory checks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from app_support import SIZE, app_for, wait_for, wait_ready

from tui_lab.cli import main
from tui_lab.devices import device_problem, fit_problem


@pytest.mark.parametrize("argv,needle", [
    (["--device", "tpu"], "device"),
    (["--device", "cuda:97"], "cuda:97"),
    (["--preset", "nope"], "unknown preset"),
    (["--checkpoint", "no/such/folder"], "not a folder"),
])
def test_bad_launches_exit_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_app_modules_do_not_import_torch():
    code = ("import sys; import tui_lab.cli.launch, tui_lab.app.app, tui_lab.app.shell.first_frame, "
            "tui_lab.app.views.attention.view, tui_lab.app.views.architecture.view, tui_lab.app.views.tour.view; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_device_and_memory_checks():
    assert device_problem("cpu") is None
    assert "must be" in device_problem("gpu0")
    message = fit_problem(8 * 2**30, 2**30, "cpu")
    assert "8.0 GiB" in message and "1.0 GiB" in message
    assert fit_problem(10, 2**30, "cpu") is None and fit_problem(10, None, "cpu") is None


async def test_checkpoint_opens_with_its_config_and_tokenizer(tmp_path, monkeypatch):
    import threading

    from tui_lab.app.views.attention import capture
    from tui_lab.app.views.attention.inputs import AttentionInputs
    from tui_lab.checkpoint import save_checkpoint
    from tui_lab.data.tokenizers import char_tokenizer
    from tui_lab.model import build_model
    from tui_lab.presets import load_preset

    # The default sentence has letters this tokenizer lacks, so the view searches the model's data for text it
    # covers (a worker). Text set while the search runs must outlive it: a search ending late (a loaded
    # machine) replaced it, and this test waited 90 s in CI. The search here ends once the text is captured.
    searched, found = threading.Event(), []
    model_inputs, on_found = capture.model_inputs, AttentionInputs.on_inputs_found
    monkeypatch.setattr(capture, "model_inputs", lambda *a: searched.wait(60) and model_inputs(*a))
    monkeypatch.setattr(AttentionInputs, "on_inputs_found", lambda self, m: (on_found(self, m), found.append(m)))
    tokenizer = char_tokenizer("the cat sat on the mat")
    config = load_preset("gpt2-toy", vocab=tokenizer.vocab_size, layers=1, d_model=32, heads=2, d_ff=64)
    save_checkpoint(tmp_path / "ckpt", build_model(config), tokenizer)
    app = app_for("--checkpoint", str(tmp_path / "ckpt"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.live.config.d_model == 32 and app.live.tokenizer is not None
        assert app.live.origin.startswith("checkpoint")
        attention = app.view("attention")
        attention.set_inputs("the cat")
        typed = tokenizer.token_strings(tokenizer.encode("the cat"))
        await wait_for(pilot, lambda: attention.src == typed)
        searched.set()
        await wait_for(pilot, lambda: bool(found))
        await pilot.pause()
        assert attention.inputs.source == "the cat" and attention.src == typed
        assert app.query_one("#f-d_model").value == "32"  # the form shows the loaded config


async def test_hf_folder_opens_with_gpt2_tokenizer(tmp_path):
    from hf_fixtures import save_hf_gpt2

    save_hf_gpt2(tmp_path, n_layer=1, n_embd=32, n_head=2, n_positions=64)
    app = app_for("--from-hf", str(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.live.origin.startswith("hf") and app.live.tokenizer is not None
        assert app.live.config.d_model == 32 and app.live.config.decoder_layers == 1
        attention = app.view("attention")
        attention.set_inputs("The quick brown fox.")
        expected = app.live.tokenizer.token_strings(app.live.tokenizer.encode("The quick brown fox."))
        await wait_for(pilot, lambda: attention.src == expected)
        assert attention.grids[("decoder-self", 0)][0][0][0] > 0.99  # the first token sees only itself


async def test_every_view_can_be_left_for_another_by_key_and_click():
    # A focused widget in the pane being left used to pull its pane back (TabbedContent follows focus).
    from tui_lab.app.app import VIEWS

    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        tabs = app.query_one("#views")
        n = len(VIEWS)

        async def leave(start, target, by_click: bool) -> None:
            # the view being left holds focus (its home), as a person finds it: the case that pulled it back
            await wait_for(pilot, lambda: app.focused is not None and start.id in [a.id for a in app.focused.ancestors])
            if by_click:
                await pilot.click(f"#--content-tab-{target.id}")
            else:
                await pilot.press(f"f{VIEWS.index(target) + 1}")  # number keys type into an Input; F-keys work
            await pilot.pause(0.05)
            assert tabs.active == target.id, f"{start.id} -> {target.id}"

        # Each view left once by a click on the next view's tab and once by the previous view's key, as two
        # rings: each view is reached by the step before (it was pressed to first, with two key presses per
        # leave: 16 events instead of 28, the same 14 leaves).
        await pilot.press("f1")
        for i, start in enumerate(VIEWS):
            await leave(start, VIEWS[(i + 1) % n], by_click=True)
        for i in range(n, 0, -1):
            await leave(VIEWS[i % n], VIEWS[(i - 1) % n], by_click=False)
