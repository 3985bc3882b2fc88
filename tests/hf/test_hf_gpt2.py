"""Loading Hugging Face GPT-2 folders: same logits, same greedy text, same tokens as `transformers`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hf_fixtures import MIXED_TEXT, save_hf_gpt2

from tui_lab.analysis import count_params
from tui_lab.generation import generate
from tui_lab.hf import hf_gpt2_config, hf_gpt2_folder, load_hf_gpt2

transformers = pytest.importorskip("transformers")

# Two shapes: GPT-2's defaults in small (n_inner None -> 4 * n_embd, gelu_new) and a custom one
# (n_inner not a multiple of n_embd, exact GELU, another epsilon, an odd number of heads).
SHAPES = {
    "default": dict(n_embd=32, n_head=4, n_layer=2, n_positions=48),
    "custom": dict(n_embd=48, n_head=3, n_layer=3, n_inner=80, n_positions=64, activation_function="gelu",
                   layer_norm_epsilon=1e-6),
}


@pytest.fixture(scope="module", params=[(s, w) for s in SHAPES for w in ("safetensors", "bin")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def folder(request, tmp_path_factory) -> Path:
    shape, weights = request.param
    path = tmp_path_factory.mktemp(f"{shape}-{weights}")
    save_hf_gpt2(path, weights, **SHAPES[shape])
    return path


def _logits_both(folder: Path, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    model, _ = load_hf_gpt2(folder)
    reference = transformers.GPT2LMHeadModel.from_pretrained(folder).eval()
    with torch.no_grad():
        return model(ids), reference(ids).logits


def test_logits_match_transformers(folder):
    config = hf_gpt2_config(folder)
    ids = torch.randint(0, config.vocab, (2, config.max_len), generator=torch.Generator().manual_seed(1))
    ours, theirs = _logits_both(folder, ids)
    assert ours.shape == theirs.shape == (2, config.max_len, config.vocab)
    assert (ours - theirs).abs().max().item() < 1e-4


def test_config_maps_onto_ours(folder):
    config = hf_gpt2_config(folder)
    hf = transformers.GPT2Config.from_pretrained(folder)
    assert (config.decoder_layers, config.d_model, config.heads) == (hf.n_layer, hf.n_embd, hf.n_head)
    assert config.d_ff == (hf.n_inner or 4 * hf.n_embd)
    assert (config.vocab, config.max_len, config.norm_eps) == (hf.vocab_size, hf.n_positions, hf.layer_norm_epsilon)
    assert config.activation == {"gelu_new": "gelu_tanh", "gelu": "gelu"}[hf.activation_function]
    assert (config.positions, config.norm_position, config.tie_embeddings) == ("learned", "pre", True)


def test_loaded_model_is_an_ordinary_model(folder):
    model, tokenizer = load_hf_gpt2(folder)
    unique = {p.data_ptr(): p.numel() for p in model.parameters()}
    assert sum(unique.values()) == count_params(model.config).total
    assert model.lm_head.weight is model.tok_embed.weight  # still tied: training keeps them one matrix
    assert not model.training
    ids = torch.tensor([tokenizer.encode(" Hello world, hello")])
    out = model.run(ids, need_weights=True)
    assert len(out.attentions) == model.config.decoder_layers
    model.train()  # further training: every weight is a Parameter that receives a gradient
    loss = torch.nn.functional.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    assert all(isinstance(p, torch.nn.Parameter) and p.grad is not None for p in model.parameters())


def test_greedy_generation_matches_transformers(folder):
    model, tokenizer = load_hf_gpt2(folder)
    reference = transformers.GPT2LMHeadModel.from_pretrained(folder).eval()
    prompt = torch.tensor([tokenizer.encode("The quick brown")])
    ours = generate(model, prompt, 30, temperature=0.0)
    ours_uncached = generate(model, prompt, 30, temperature=0.0, use_cache=False)
    # No eos: both must produce exactly 30 tokens rather than stop at different places.
    theirs = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=30, do_sample=False,
                                eos_token_id=None, pad_token_id=tokenizer.eos_id)
    assert ours.shape == (1, prompt.shape[1] + 30)
    assert ours.tolist() == theirs.tolist() == ours_uncached.tolist()
    hf_tokenizer = transformers.GPT2TokenizerFast.from_pretrained(folder)
    new = ours[0, prompt.shape[1]:].tolist()
    assert tokenizer.decode(new) == hf_tokenizer.decode(new)


TEXTS = [MIXED_TEXT, " leading space", "  two leading", "\n\nnewlines first\n", "naïve 日本語 🙂🚀", "", " ",
         "tab\tend\t"]


@pytest.mark.parametrize("source", ["vocab+merges", "tokenizer.json"])
def test_tokenizer_matches_gpt2_tokenizer_fast(tmp_path, source):
    save_hf_gpt2(tmp_path, n_embd=16, n_head=2, n_layer=1, n_positions=16)
    hf_tokenizer = transformers.GPT2TokenizerFast.from_pretrained(tmp_path)
    if source == "tokenizer.json":
        hf_tokenizer.save_pretrained(tmp_path / "json")
        (tmp_path / "json" / "vocab.json").unlink(missing_ok=True)
        (tmp_path / "json" / "merges.txt").unlink(missing_ok=True)
        for name in ("config.json", "model.safetensors"):
            shutil.copy(tmp_path / name, tmp_path / "json" / name)
        tmp_path = tmp_path / "json"
    _, tokenizer = load_hf_gpt2(tmp_path)
    assert tokenizer.kind == "gpt2"
    assert tokenizer.eos_id == tokenizer.bos_id == hf_tokenizer.eos_token_id == tokenizer.vocab_size - 1
    for text in TEXTS:
        ids = tokenizer.encode(text)
        assert ids == hf_tokenizer.encode(text), text
        assert tokenizer.decode(ids) == hf_tokenizer.decode(ids) == text
    assert tokenizer.decode([tokenizer.eos_id, *tokenizer.encode("hi")]) == "hi"  # specials dropped


def _cache_root(tmp_path: Path, source: Path) -> Path:
    """models--gpt2/{blobs, refs/main, snapshots/<hash>/} with symlinks, as huggingface_hub lays it out."""
    root = tmp_path / "hub" / "models--gpt2"
    good, partial = root / "snapshots" / ("a" * 40), root / "snapshots" / ("b" * 40)
    (root / "blobs").mkdir(parents=True)
    good.mkdir(parents=True)
    partial.mkdir(parents=True)
    for i, file in enumerate(sorted(source.iterdir())):
        blob = root / "blobs" / f"blob{i}"
        shutil.copy(file, blob)
        (good / file.name).symlink_to(os.path.relpath(blob, good))
    shutil.copy(source / "config.json", partial / "config.json")  # a snapshot with no weights
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text("b" * 40)  # points at the incomplete one: we fall back
    return root


def test_cache_root_picks_the_complete_snapshot(tmp_path):
    source = tmp_path / "source"
    save_hf_gpt2(source, n_embd=16, n_head=2, n_layer=1, n_positions=16)
    root = _cache_root(tmp_path, source)
    assert hf_gpt2_folder(root) == root / "snapshots" / ("a" * 40)
    assert hf_gpt2_config(root).name == "gpt2"
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.equal(load_hf_gpt2(root)[0](ids), load_hf_gpt2(source)[0](ids))
    with pytest.raises(ValueError, match="models--gpt2"):
        hf_gpt2_config(tmp_path / "hub")  # the hub itself: point at one model in it


def test_a_model_id_is_found_in_the_local_cache_only(tmp_path, monkeypatch):
    source = tmp_path / "source"
    save_hf_gpt2(source, n_embd=16, n_head=2, n_layer=1, n_positions=16)
    root = _cache_root(tmp_path, source)
    monkeypatch.setenv("HF_HUB_CACHE", str(root.parent))
    monkeypatch.chdir(tmp_path)
    assert hf_gpt2_folder("gpt2") == root / "snapshots" / ("a" * 40)
    with pytest.raises(ValueError, match="not in the local cache .*; add --download"):
        hf_gpt2_config("gpt2-medium")  # not in the cache: an error, never a download


def test_untied_checkpoint(tmp_path):
    save_hf_gpt2(tmp_path, n_embd=16, n_head=2, n_layer=1, n_positions=16, tie_word_embeddings=False)
    model, _ = load_hf_gpt2(tmp_path)
    assert not model.config.tie_embeddings and model.lm_head.weight is not model.tok_embed.weight
    ours, theirs = _logits_both(tmp_path, torch.tensor([[5, 6, 7, 8]]))
    assert (ours - theirs).abs().max().item() < 1e-4


def test_reading_the_config_imports_no_torch(tmp_path):
    save_hf_gpt2(tmp_path, n_embd=16, n_head=2, n_layer=1, n_positions=16)
    code = ("import sys; from tui_lab.hf import hf_gpt2_config; "
            f"print(hf_gpt2_config({str(tmp_path)!r}).d_model, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["16", "False"]


def test_generate_cli_from_hf_matches_transformers(folder, capsys):
    import json

    from tui_lab.cli import main

    _, tokenizer = load_hf_gpt2(folder)
    assert main(["generate", "--from-hf", str(folder), "--prompt", "The quick brown", "--temperature", "0",
                 "--max-new-tokens", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    reference = transformers.GPT2LMHeadModel.from_pretrained(folder).eval()
    prompt = torch.tensor([tokenizer.encode("The quick brown")])
    theirs = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=8, do_sample=False,
                                eos_token_id=None, pad_token_id=tokenizer.eos_id)
    new = theirs[0, prompt.shape[1]:].tolist()
    assert out["completion"] == tokenizer.decode(new)
