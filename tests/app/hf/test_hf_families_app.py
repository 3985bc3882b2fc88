"""The app opens Llama and Marian folders with `--from-hf` like GPT-2's: the live model is the real one."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, wait_ready
from hf_family_fixtures import save_causal, save_marian

pytest.importorskip("transformers")


@pytest.mark.parametrize("kind", ["llama", "marian"])
async def test_the_app_opens_a_family_folder(tmp_path, kind):
    save_causal("llama", tmp_path) if kind == "llama" else save_marian(tmp_path, bias=False)
    app = app_for("--from-hf", str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert app.live.origin == f"hf {tmp_path}" and app.live.generation == 1
        family = "encoder-decoder" if kind == "marian" else "decoder-only"
        assert app.live.config.family == family
        assert not any("Traceback" in line for line in screen_lines(app))
