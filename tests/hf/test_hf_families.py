"""`load_hf` on random-weight transformers models of each family: same logits, same greedy text."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli
from hf_family_fixtures import CAUSAL, missing_axes, save_causal, save_marian

from tui_lab.analysis import count_params
from tui_lab.generation import generate
from tui_lab.hf import hf_config, load_hf

transformers = pytest.importorskip("transformers")


def _needs(axes: tuple[str, ...]):
    missing = missing_axes(axes)
    return pytest.mark.skipif(bool(missing), reason=f"needs the config axis {', '.join(missing)} (not in this build)")


CAUSAL_PARAMS = [pytest.param(kind, marks=_needs(CAUSAL[kind][3]), id=kind) for kind in CAUSAL]


@pytest.fixture(scope="module", params=CAUSAL_PARAMS)
def causal(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    return folder, save_causal(request.param, folder)


def test_causal_logits_match_transformers(causal):
    folder, reference = causal
    ours, tokenizer = load_hf(folder)
    assert tokenizer is None  # no tokenizer files in the folder
    ids = torch.randint(0, 61, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        diff = (ours(ids) - reference(ids).logits).abs().max().item()
    assert diff < 1e-4


def test_causal_greedy_text_matches_transformers(causal):
    folder, reference = causal
    ours, _ = load_hf(folder)
    prompt = torch.randint(0, 61, (1, 5), generator=torch.Generator().manual_seed(2))
    theirs = reference.generate(prompt, max_new_tokens=20, do_sample=False, num_beams=1, eos_token_id=None,
                                pad_token_id=0)
    mine = generate(ours, prompt, max_new_tokens=20, temperature=0.0)
    assert mine.tolist() == theirs.tolist()


def test_causal_counts_and_trains_like_ours(causal):
    folder, reference = causal
    model, _ = load_hf(folder)
    assert count_params(model.config).total == sum(p.numel() for p in reference.parameters())
    unique = {p.data_ptr(): p.numel() for p in model.parameters()}
    assert sum(unique.values()) == count_params(model.config).total
    assert hf_config(folder) == model.config


@pytest.fixture(scope="module", params=[True, False], ids=["final_logits_bias", "zero-bias"])
def marian(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("marian")
    return folder, save_marian(folder, bias=request.param)


def test_marian_logits_match_transformers(marian):
    folder, reference = marian
    ours, tokenizer = load_hf(folder)
    c = ours.config
    assert (c.family, c.norm_position, c.activation, c.positions, c.final_norm) == (
        "encoder-decoder", "post", "silu", "sinusoidal_halves", False)
    assert ours.lm_head.bias.shape == (c.vocab,)  # final_logits_bias (1, V) lands on output_bias
    assert torch.equal(ours.lm_head.bias, reference.final_logits_bias[0])
    g = torch.Generator().manual_seed(3)
    src, tgt = torch.randint(0, 60, (2, 11), generator=g), torch.randint(0, 60, (2, 7), generator=g)
    src_mask = torch.ones_like(src, dtype=torch.bool)
    src_mask[1, 8:] = False
    src[1, 8:] = 60  # padding
    with torch.no_grad():
        mine = ours(src, tgt, src_mask=src_mask)
        theirs = reference(input_ids=src, attention_mask=src_mask.long(), decoder_input_ids=tgt).logits
    assert (mine - theirs).abs().max().item() < 1e-4


def test_marian_greedy_translation_matches_transformers(marian):
    folder, reference = marian
    ours, _ = load_hf(folder)
    src = torch.randint(1, 60, (1, 9), generator=torch.Generator().manual_seed(4))
    src[0, -1] = 0  # Marian's sources end with </s>
    theirs = reference.generate(src, max_new_tokens=15, do_sample=False, num_beams=1, min_length=0,
                                forced_eos_token_id=None, bad_words_ids=None)
    mine = generate(ours, src, max_new_tokens=15, temperature=0.0, bos_id=60, eos_id=0)
    n = theirs.shape[1]
    assert mine[0, :n].tolist() == theirs[0].tolist()


def test_marian_cross_attention_is_target_by_source(marian):
    folder, _ = marian
    model, _ = load_hf(folder)
    out = model.run(torch.tensor([[5, 6, 7, 0]]), torch.tensor([[60, 9, 10]]), need_weights=True)
    cross = [a for a in out.attentions if a.kind == "cross"]
    assert len(cross) == 2 and cross[0].weights.shape == (1, 4, 3, 4)


def _rewrite(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("changes, message", [
    ({"model_type": "bart"}, "model_type is 'bart'; the lab opens gpt2, llama"),
    ({"hidden_act": "gelu"}, "hidden_act 'gelu' is not supported"),
    ({"attention_bias": True}, "attention_bias is true"),
    ({"head_dim": 16}, "head_dim (16) must be hidden_size / num_attention_heads (8)"),
    ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 1.0}}, "rope_scaling type 'llama3' is not supported"),
    ({"num_hidden_layers": 0}, "num_hidden_layers must be a positive integer"),
])
def test_unsupported_llama_options_are_refused_in_one_line(tmp_path, changes, message):
    save_causal("llama", tmp_path)
    _rewrite(tmp_path, **changes)
    with pytest.raises(ValueError, match=None) as err:
        load_hf(tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unsupported_marian_options_are_refused_in_one_line(tmp_path):
    save_marian(tmp_path, bias=False)
    _rewrite(tmp_path, decoder_ffn_dim=64)
    with pytest.raises(ValueError, match=r"decoder_ffn_dim \(64\) must equal encoder_ffn_dim \(48\)"):
        hf_config(tmp_path)


def test_a_tokenizer_json_is_loaded_with_config_special_ids(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    save_causal("llama", tmp_path)
    hf = Tokenizer(models.BPE(unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.train_from_iterator(["hello world, the lab opens llama"] * 5,
                           trainers.BpeTrainer(vocab_size=60, special_tokens=["<unk>", "<s>", "</s>"],
                                               show_progress=False))
    hf.save(str(tmp_path / "tokenizer.json"))
    _, tokenizer = load_hf(tmp_path)
    assert (tokenizer.bos_id, tokenizer.eos_id) == (1, 2)
    assert tokenizer.decode(tokenizer.encode("hello world")) == "hello world"
    reference = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    assert tokenizer.encode("hello world") == reference.encode("hello world", add_special_tokens=False)


def test_marian_sentencepiece_folder_loads_without_a_tokenizer(tmp_path):
    from tui_lab.loading import load_model

    save_marian(tmp_path, bias=False)
    (tmp_path / "source.spm").write_bytes(b"\x00")
    loaded = load_model("hf", str(tmp_path))
    assert loaded.tokenizer is None and "sentencepiece" in loaded.label and "Marian" in loaded.label


def test_every_command_takes_a_family_folder(tmp_path, capsys):
    llama, marian = tmp_path / "llama", tmp_path / "marian"
    save_causal("llama", llama)
    save_marian(marian, bias=False)
    for folder, family in ((llama, "decoder-only"), (marian, "encoder-decoder")):
        info = run_cli(capsys, "info", "--from-hf", str(folder), "--json")
        assert info.returncode == 0, info.stderr
        data = json.loads(info.stdout)
        assert data["config"]["family"] == family
        assert data["total_params"] == count_params(hf_config(folder)).total
        out = run_cli(capsys, "generate", "--from-hf", str(folder), "--prompt", "hi", "--max-new-tokens", "3",
                   "--temperature", "0", "--json")
        assert out.returncode == 0, out.stderr
    train = run_cli(capsys, "train", "--from-hf", str(llama), "--steps", "1")
    assert train.returncode == 2 and "no tokenizer.json; fine-tuning needs the model's own tokenizer" in train.stderr
    train = run_cli(capsys, "train", "--from-hf", str(marian), "--steps", "1")
    assert train.returncode == 2 and "encoder-decoder models are not fine-tuned here" in train.stderr
