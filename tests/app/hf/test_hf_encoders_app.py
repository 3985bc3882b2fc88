"""BERT and ViT folders on every face: `info --from-hf` counts them, the app opens them as its live model."""

from __future__ import annotations

import json

import pytest
from app_support import app_for, screen_lines, wait_ready
from cli_support import run_cli
from hf_family_fixtures import save_bert, save_vit, save_wordpiece

from tui_lab.analysis import count_params

pytest.importorskip("transformers")


@pytest.mark.parametrize("save", [save_bert, save_vit], ids=["bert", "vit"])
def test_info_counts_the_folder(tmp_path, save, capsys):
    reference = save(tmp_path)
    out = run_cli(capsys, "info", "--from-hf", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["config"]["family"] == "encoder-only"
    assert data["total_params"] == sum(p.numel() for p in reference.parameters())


@pytest.mark.parametrize("kind", ["bert", "vit"])
async def test_the_app_opens_an_encoder_folder(tmp_path, kind):
    if kind == "bert":
        save_bert(tmp_path)
        save_wordpiece(tmp_path)
    else:
        save_vit(tmp_path)
    app = app_for("--from-hf", str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert app.live.origin == f"hf {tmp_path}" and app.live.generation == 1
        assert app.live.config.head == ("mlm" if kind == "bert" else "classifier")
        assert count_params(app.live.config).total == sum(p.numel() for p in app.live.model.parameters())
        assert not any("Traceback" in line for line in screen_lines(app))
