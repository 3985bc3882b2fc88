"""The stand-in Hub's fixtures: a private Hugging Face cache for each test (autouse), tiny GPT-2 sources, the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from hf_fixtures import save_hf_gpt2
from hub_server import StandInHub

hf_constants = pytest.importorskip("huggingface_hub.constants")


TINY = dict(n_embd=16, n_head=2, n_layer=2, n_positions=32)


NOT_NEEDED = {"README.md": b"# a tiny GPT-2\n", "flax_model.msgpack": b"\0" * 4096, "onnx.txt": b"x"}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    # huggingface_hub read these at its import; set what it would have read so that nothing it does on its
    # own (the agent-registry look-up while building headers, a stored token's refresh) leaves this machine.
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    return home / "hub"


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sources")
    save_hf_gpt2(root / "safetensors", **TINY)
    save_hf_gpt2(root / "bin", "bin", **TINY)
    return {"safetensors": root / "safetensors", "bin": root / "bin"}


@pytest.fixture
def hub(sources, monkeypatch):
    server = StandInHub()
    server.add_repo("tiny-gpt2", sources["safetensors"], extra=NOT_NEEDED)
    server.add_repo("lab/pickle-only", sources["bin"])
    server.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield server
    server.stop()

