"""The stand-in Hub serves an instruct-shaped folder (an eos list, generation_config.json, a chat template):
`tui-lab generate --from-hf ID --download --chat` fetches the template too and matches transformers."""

from __future__ import annotations

import json

import hub_fixtures
import pytest
import torch
from hf_family_fixtures import save_instruct
from hub_server import StandInHub

from tui_lab.cli import main
from tui_lab.hf.hub import locate

cache = hub_fixtures.cache  # a private HF cache for every test here (autouse)
transformers = pytest.importorskip("transformers")
ID = "lab/tiny-instruct"


@pytest.fixture
def hub(tmp_path, monkeypatch):
    folder = tmp_path / "instruct"
    folder.mkdir()
    save_instruct(folder)
    server = StandInHub()
    server.add_repo(ID, folder, extra={"README.md": b"# a tiny chat model\n"})
    server.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield server
    server.stop()


def test_download_and_chat_match_transformers(hub, capsys):
    argv = ["generate", "--from-hf", ID, "--download", "--chat", "--prompt", "what is 2 and 2?", "--temperature", "0",
            "--max-new-tokens", "30", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"chat_template.jinja", "tokenizer_config.json", "generation_config.json"} <= set(hub.fetched())
    assert "README.md" not in hub.fetched()
    folder = locate(ID)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    prompt = list(tokenizer.apply_chat_template([{"role": "user", "content": "what is 2 and 2?"}],
                                                add_generation_prompt=True, tokenize=True, return_dict=False))
    assert out["prompt_ids"] == prompt
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    expected = reference.generate(torch.tensor([prompt]), max_new_tokens=30, do_sample=False)[0, len(prompt):]
    assert out["ids"] == expected.tolist() and out["ids"][-1] == tokenizer.convert_tokens_to_ids("<|eot|>")
