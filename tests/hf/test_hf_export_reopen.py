"""The lab reopens every folder it exports, whatever its tokenizer: export -> `load_hf` -> generate gives the ids
the model gave before the export (char and word tokenizers were refused: "model is WordLevel, GPT-2's is BPE")."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli

from tui_lab.config import ModelConfig
from tui_lab.data.tokenizers import bpe_tokenizer, char_tokenizer, word_tokenizer
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.hf import export_hf_gpt2
from tui_lab.hf.load import open_hf
from tui_lab.model import build_model

TEXT = "the cat sat on the mat. a dog saw the cat and the cat ran.\n" * 4
TOKENIZERS = {
    "char": lambda: char_tokenizer(TEXT),
    "word": lambda: word_tokenizer(sorted(set(TEXT.split()))),
    "bpe": lambda: bpe_tokenizer(TEXT, 280),
}


def model_for(tokenizer) -> torch.nn.Module:
    config = ModelConfig(name="tiny", decoder_layers=2, d_model=32, heads=4, d_ff=64, vocab=tokenizer.vocab_size,
                         max_len=64, dropout=0.0)
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.3)
    return model


@pytest.mark.parametrize("kind", list(TOKENIZERS))
def test_an_export_reopens_with_its_tokenizer_and_generates_the_same_ids(kind, tmp_path):
    tokenizer = TOKENIZERS[kind]()
    model = model_for(tokenizer)
    out = export_hf_gpt2(model, tokenizer, tmp_path / "hf")
    opened = open_hf(out)
    again = opened.tokenizer
    prompt = tokenizer.encode("the cat sat")
    assert again.encode("the cat sat") == prompt and again.eos_id == tokenizer.eos_id
    assert again.decode(prompt) == tokenizer.decode(prompt)
    for settings in (GenerationSettings(40, temperature=0.0), GenerationSettings(40, temperature=0.8, seed=3),
                     GenerationSettings(20, beam_size=3)):
        before = complete(model, tokenizer, prompt, settings).ids
        assert complete(opened.model, again, prompt, settings).ids == before, settings


def test_info_and_generate_open_an_exported_char_model(tmp_path, capsys):
    tokenizer = char_tokenizer(TEXT)
    model = model_for(tokenizer)
    out = export_hf_gpt2(model, tokenizer, tmp_path / "hf")
    info = run_cli(capsys, "info", "--from-hf", str(out))
    assert info.returncode == 0, info.stderr
    done = run_cli(capsys, "generate", "--from-hf", str(out), "--prompt", "the cat", "--temperature", "0",
                   "--max-new-tokens", "12", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["tokenizer"] == "char"
    assert result["ids"] == complete(model, tokenizer, tokenizer.encode("the cat"),
                                     GenerationSettings(12, temperature=0.0)).ids
