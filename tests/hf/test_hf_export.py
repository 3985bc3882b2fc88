"""Export: a gpt2-family model of ours -> a Hugging Face GPT-2 folder -> `transformers` -> identical logits."""

from __future__ import annotations

import json

import pytest
import torch
from hf_fixtures import CORPUS, MIXED_TEXT, save_hf_gpt2

from tui_lab.cli import main
from tui_lab.config import ModelConfig
from tui_lab.data.tokenizers import bpe_tokenizer
from tui_lab.hf import export_hf_gpt2, load_hf_gpt2
from tui_lab.model import build_model

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tokenizer():
    return bpe_tokenizer("".join(CORPUS), 300)


def ours(tokenizer, seed: int = 0, **changes) -> torch.nn.Module:
    """A tiny GPT-2-shaped model of ours with every parameter random (LayerNorms and biases too)."""
    config = ModelConfig(name="tiny", decoder_layers=2, d_model=32, heads=4, d_ff=72, vocab=tokenizer.vocab_size + 5,
                         max_len=32, dropout=0.0, norm_eps=1e-6).replace(**changes)
    torch.manual_seed(seed)
    model = build_model(config).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.2)
    return model


def _ids(model, length: int = 32) -> torch.Tensor:
    return torch.randint(0, model.config.vocab, (2, length), generator=torch.Generator().manual_seed(3))


def _max_diff(model, out, ids) -> float:
    reference = transformers.GPT2LMHeadModel.from_pretrained(out).eval()
    with torch.no_grad():
        return (model(ids) - reference(ids).logits).abs().max().item()


@pytest.mark.parametrize("changes", [{}, {"activation": "gelu"}, {"activation": "relu", "tie_embeddings": False}],
                         ids=["gelu_tanh-tied", "gelu-tied", "relu-untied"])
def test_round_trip_gives_identical_logits(tokenizer, tmp_path, changes):
    model = ours(tokenizer, **changes)
    out = export_hf_gpt2(model, tokenizer, tmp_path / "hf")
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= {
        p.name for p in out.iterdir()}
    ids = _ids(model)
    assert _max_diff(model, out, ids) < 1e-4
    again, _ = load_hf_gpt2(out)  # ours -> export -> ours
    with torch.no_grad():
        assert (again(ids) - model(ids)).abs().max().item() < 1e-6
    assert again.config.replace(name="tiny", source="", dropout=0.0) == model.config


def test_exported_tokenizer_loads_in_transformers(tokenizer, tmp_path):
    out = export_hf_gpt2(ours(tokenizer), tokenizer, tmp_path / "hf")
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert hf_tokenizer.encode(MIXED_TEXT, add_special_tokens=False) == tokenizer.encode(MIXED_TEXT)
    assert hf_tokenizer.eos_token_id == tokenizer.eos_id


def test_hf_to_ours_to_hf(tmp_path):
    source = tmp_path / "source"
    save_hf_gpt2(source, n_embd=32, n_head=4, n_layer=2, n_inner=48, n_positions=24)
    model, tokenizer = load_hf_gpt2(source)
    out = export_hf_gpt2(model, tokenizer, tmp_path / "again")
    ids = _ids(model, 24)
    original = transformers.GPT2LMHeadModel.from_pretrained(source).eval()
    exported = transformers.GPT2LMHeadModel.from_pretrained(out).eval()
    with torch.no_grad():
        assert (original(ids).logits - exported(ids).logits).abs().max().item() < 1e-6
    hf_tokenizer = transformers.GPT2TokenizerFast.from_pretrained(out)
    assert hf_tokenizer.encode(MIXED_TEXT) == tokenizer.encode(MIXED_TEXT)
    assert hf_tokenizer.eos_token_id == tokenizer.eos_id


REFUSED = [
    ("positions", "rope"), ("positions", "alibi"), ("positions", "sinusoidal"), ("norm", "rmsnorm"),
    ("activation", "swiglu"), ("norm_position", "post"), ("final_norm", False), ("bias", False),
    ("embedding_scale", "sqrt_d_model"),
]


@pytest.mark.parametrize(("field", "value"), REFUSED, ids=[f"{f}={v}" for f, v in REFUSED])
def test_configs_gpt2_cannot_express_are_refused(tokenizer, tmp_path, field, value):
    model = ours(tokenizer, **{field: value})
    with pytest.raises(ValueError, match=f"cannot export as GPT-2: {field} is {value!r}"):
        export_hf_gpt2(model, tokenizer, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_encoder_decoder_is_refused(tokenizer, tmp_path):
    model = ours(tokenizer, family="encoder-decoder", encoder_layers=1, decoder_layers=1, positions="sinusoidal",
                 norm_position="post")
    with pytest.raises(ValueError, match="family is 'encoder-decoder'"):
        export_hf_gpt2(model, tokenizer, tmp_path / "hf")


def test_out_folder_rules(tokenizer, tmp_path):
    model = ours(tokenizer)
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="already exists and is not an empty folder"):
        export_hf_gpt2(model, tokenizer, tmp_path / "hf")
    assert (tmp_path / "hf" / "notes.txt").exists()
    export_hf_gpt2(model, tokenizer, tmp_path / "hf", overwrite=True)
    assert not (tmp_path / "hf" / "notes.txt").exists() and (tmp_path / "hf" / "model.safetensors").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["hf"]  # no temporary folder left behind
    with pytest.raises(ValueError, match="the tokenizer has 300 tokens but the model's vocab is 100"):
        export_hf_gpt2(ours(tokenizer, vocab=100), tokenizer, tmp_path / "small")


def test_cli_export(tokenizer, tmp_path, capsys):
    from tui_lab.checkpoint import save_checkpoint

    model = ours(tokenizer)
    save_checkpoint(tmp_path / "ckpt", model, tokenizer)
    out = tmp_path / "hf"
    assert main(["export", "--checkpoint", str(tmp_path / "ckpt"), "--hf", str(out), "--json"]) == 0
    assert "model.safetensors" in json.loads(capsys.readouterr().out)["files"]
    assert _max_diff(model, out, _ids(model)) < 1e-4
    assert main(["export", "--checkpoint", str(tmp_path / "ckpt"), "--hf", str(out)]) == 2  # exists: no --force
    assert main(["export", "--checkpoint", str(tmp_path / "ckpt"), "--hf", str(out), "--force"]) == 0


def test_cli_refusal_is_one_line(tokenizer, tmp_path, capsys):
    from tui_lab.checkpoint import save_checkpoint

    save_checkpoint(tmp_path / "ckpt", ours(tokenizer, positions="rope"), tokenizer)
    assert main(["export", "--checkpoint", str(tmp_path / "ckpt"), "--hf", str(tmp_path / "hf")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "positions is 'rope'" in err
    assert main(["export", "--checkpoint", str(tmp_path / "nothing"), "--hf", str(tmp_path / "hf")]) == 2
