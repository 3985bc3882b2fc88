"""The Train form follows the live model's objective: BERT's masked LM and a ViT's shapes task get the defaults
`tui-lab train` uses for them (one core function, `train.config.model_defaults`), shown on the screen at 80x24,
and a few steps of that objective run from the form."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_text, wait_ready
from app_train_support import start_paused, steps, stop, train_view
from textual.widgets import Input

from tui_lab.app.views.train.form import APP_LM, TrainForm, app_defaults
from tui_lab.presets import load_preset
from tui_lab.train.config import IMAGE_DEFAULTS, MLM_DEFAULTS, model_defaults, train_config_for

SHOWN = (("steps", "steps"), ("batch_size", "batch"), ("lr", "lr"))


@pytest.fixture(autouse=True)
def _one_training_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_TRAIN_THREADS", "1")


def test_the_cli_and_the_form_take_the_same_model_defaults():
    bert, vit, gpt = load_preset("bert-toy"), load_preset("vit-toy"), load_preset("gpt2-toy")
    assert model_defaults(bert) == MLM_DEFAULTS and model_defaults(vit) == IMAGE_DEFAULTS and not model_defaults(gpt)
    for config in (bert, vit):
        cli = train_config_for(None, **model_defaults(config)).to_dict()  # what tui-lab train builds
        form = app_defaults(None, config)
        for key, value in model_defaults(config).items():
            assert form[key] == cli[key] == value, key
    assert app_defaults(None, gpt) == APP_LM


@pytest.mark.parametrize("preset,objective,defaults,metric", [
    ("bert-toy", "objective: masked LM", MLM_DEFAULTS, "seq len"),
    ("vit-toy", "data: built-in shapes", IMAGE_DEFAULTS, None),
])
async def test_the_form_shows_the_objective_defaults_and_steps_run(preset, objective, defaults, metric):
    app = app_for("--preset", preset)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.show_view("train")
        await pilot.pause()
        form = app.query_one(TrainForm)
        expected = train_config_for(None, **model_defaults(load_preset(preset)))  # the CLI's config
        text = screen_text(app)
        assert objective in text
        for name, title in SHOWN:
            value = getattr(expected, name)
            shown = f"{value:g}" if name == "lr" else str(value)
            assert app.query_one(f"#tf-{name}", Input).value == shown
            form_cells = [line.split("▕")[0].split() for line in text.splitlines()]  # the form, left of the bar
            assert [title, shown] in [[" ".join(cells[:-1]), cells[-1]] for cells in form_cells if cells], title
        if metric:  # the MLM's window is the CLI's 64, not the LM's 128
            assert app.query_one("#tf-seq_len", Input).value == str(defaults["seq_len"])
        else:  # images: no tokenizer, window or text file
            assert not app.query_one("#tf-row-seq_len").display and not app.query_one("#tf-data").display
        task, fields = form.fields()
        assert task is None and all(fields[k] == v for k, v in defaults.items() if k not in ("steps", "batch_size"))
        # A few steps of that objective (small batches: the defaults' sizes are for a real run).
        view = await train_view(pilot, {"batch_size": "4"})
        await start_paused(pilot, view)
        await steps(pilot, view, 2)
        assert len(view.store.current.train_loss) == 2
        await stop(pilot, view)
