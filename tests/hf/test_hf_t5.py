"""T5 from Hugging Face (issue 27): `load_hf` opens T5 folders, the original shape (ReLU, tied, the decoder's output
rescaled) and v1.1 / FLAN's (gated GELU, an lm_head of its own), with logits and greedy ids equal to transformers'
T5ForConditionalGeneration, and its sentencepiece tokenizer read as AutoTokenizer reads it."""

from __future__ import annotations

import io
import json

import pytest
import torch
from hf_family_fixtures import randomise

from tui_lab import build_model, load_preset
from tui_lab.analysis import count_params
from tui_lab.generation import generate
from tui_lab.hf import hf_config, load_hf

transformers = pytest.importorskip("transformers")
spm = pytest.importorskip("sentencepiece")

SMALL = dict(vocab_size=168, d_model=32, d_kv=8, num_heads=4, d_ff=48, num_layers=2, num_decoder_layers=3,
             relative_attention_num_buckets=8, relative_attention_max_distance=20, decoder_start_token_id=0,
             pad_token_id=0, eos_token_id=1)
SENTENCES = ["the cat sat on the mat", "I have seen the film today", "translate English to German: the house",
             "a zebra? 7 films!", "the <extra_id_0> sat on <extra_id_1>"]


def save_t5(folder, **changes):
    """A random T5ForConditionalGeneration saved as the hub saves it (transformers' save_pretrained)."""
    model = randomise(transformers.T5ForConditionalGeneration(transformers.T5Config(**{**SMALL, **changes})))
    model.save_pretrained(folder)
    return model


def save_untied(folder, **changes):
    """v1.1 / FLAN: gated GELU and an lm_head of its own. transformers 5.24 always ties in T5Config, so the head is
    made separate here and the folder written by hand: config.json says tie_word_embeddings false, and the
    weights hold lm_head.weight beside shared.weight, as FLAN-T5's do."""
    from safetensors.torch import save_file

    model = randomise(transformers.T5ForConditionalGeneration(
        transformers.T5Config(**{**SMALL, **changes}, feed_forward_proj="gated-gelu", tie_word_embeddings=False)))
    with torch.no_grad():
        model.lm_head.weight = torch.nn.Parameter(torch.randn(168, 32) * 0.5)
    assert not model.config.scale_decoder_outputs
    model.config.save_pretrained(folder)
    raw = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**raw, "tie_word_embeddings": False}))
    save_file({k: v.detach().clone().contiguous() for k, v in model.state_dict().items()},
              str(folder / "model.safetensors"), metadata={"format": "pt"})
    return model


def hf_logits(model, src, tgt, mask=None):
    with torch.no_grad():
        return model(input_ids=src, attention_mask=mask, decoder_input_ids=tgt).logits


@pytest.mark.parametrize("shape", ["original", "v1.1"])
def test_logits_equal_transformers(tmp_path, shape):
    reference = save_t5(tmp_path) if shape == "original" else save_untied(tmp_path)
    ours, _ = load_hf(tmp_path)
    c = ours.config
    assert (c.positions, c.norm, c.attention_scale, c.bias) == ("t5", "rmsnorm", "none", False)
    assert (c.activation, c.tie_embeddings, c.output_scale) == \
        (("relu", True, "inv_sqrt_d_model") if shape == "original" else ("geglu", False, "none"))
    assert (c.encoder_layers, c.decoder_layers) == (2, 3)
    torch.manual_seed(1)
    src, tgt = torch.randint(2, 160, (2, 11)), torch.randint(2, 160, (2, 9))
    mask = torch.ones(2, 11, dtype=torch.bool)
    mask[1, 7:] = False  # a padded source
    with torch.no_grad():
        got = ours(src, tgt, src_mask=mask)
    want = hf_logits(reference, src, tgt, mask.long())
    assert (got - want).abs().max() < 1e-4
    assert sum(p.numel() for p in ours.parameters()) == count_params(c).total == \
        sum(p.numel() for p in reference.parameters())


@pytest.mark.parametrize("shape", ["original", "v1.1"])
def test_greedy_ids_equal_generate(tmp_path, shape):
    # as many decoder layers as encoder layers: transformers 5.24's generate() sizes its cache by num_layers
    reference = save_t5(tmp_path, num_decoder_layers=2) if shape == "original" else \
        save_untied(tmp_path, num_decoder_layers=2)
    ours, _ = load_hf(tmp_path)
    torch.manual_seed(3)
    src = torch.randint(2, 160, (2, 10))
    want = reference.generate(input_ids=src, max_new_tokens=12, do_sample=False, decoder_start_token_id=0,
                              eos_token_id=1, pad_token_id=0)
    got = generate(ours, src, max_new_tokens=12, temperature=0.0, bos_id=0, eos_id=1)
    assert got.tolist() == want.tolist()
    assert len(set(got[0].tolist())) >= 3  # a sequence the comparison could get wrong


def _spiece(folder) -> None:
    """A unigram spiece.model trained here, with T5's special ids (pad 0, </s> 1, <unk> 2, no <s>)."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES[:4] * 30), model_writer=model, vocab_size=60, hard_vocab_limit=False,
        model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2, num_threads=1)
    (folder / "spiece.model").write_bytes(model.getvalue())


def test_the_sentencepiece_tokenizer_reads_as_auto_tokenizer(tmp_path):
    save_t5(tmp_path)
    _spiece(tmp_path)
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    _, tokenizer = load_hf(tmp_path)
    pieces = spm.SentencePieceProcessor(model_file=str(tmp_path / "spiece.model")).get_piece_size()
    assert tokenizer.vocab_size == len(auto) == pieces + 100  # the pieces, then the 100 sentinels
    assert (tokenizer.pad_id, tokenizer.eos_id, tokenizer.bos_id, tokenizer.unk_id) == (0, 1, 0, 2)
    for text in SENTENCES:
        ids = auto(text).input_ids
        assert tokenizer.encode(text) == ids and ids[-1] == 1  # pieces then </s>
        # pad and </s> dropped, the sentinels kept: they are T5's output (the spans they mark), not markup
        assert tokenizer.decode(ids) == auto.decode([i for i in ids if i > 1], skip_special_tokens=False)
    assert tokenizer.token_strings([auto.convert_tokens_to_ids("<extra_id_0>")]) == ["<extra_id_0>"]
    # ids the model has and the tokenizer lacks (here past pieces + 100; 32,100..32,127 in t5-small) still display
    past = tokenizer.vocab_size
    assert tokenizer.token_strings([5, past, 167]) == [tokenizer.token_strings([5])[0], f"<id {past}>", "<id 167>"]
    assert tokenizer.decode([5, past]) == tokenizer.decode([5])
    with pytest.raises(ValueError, match=r"^ids: 168 is outside the vocabulary \(0..167\)$"):
        tokenizer.token_strings([168])


@pytest.mark.parametrize("kind, files, words", [
    ("ByT5Tokenizer", {}, "ByT5 reads raw UTF-8 bytes"),
    ("RobertaTokenizer", {"vocab.json": "{}", "merges.txt": ""}, "CodeT5 uses a RoBERTa byte-level BPE"),
])
def test_byt5_and_codet5_tokenizers_are_refused_in_one_line(tmp_path, kind, files, words):
    save_t5(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": kind}))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=rf"^tokenizer_config.json: tokenizer_class {kind} is not read here "
                                         rf"\({words}\); the lab reads T5's sentencepiece tokenizer") as err:
        load_hf(tmp_path)
    assert "\n" not in str(err.value)


def test_a_head_size_other_than_d_model_over_heads_is_refused_in_one_line(tmp_path):
    """FLAN-T5-small's shape: 6 heads x d_kv 64 in a d_model of 512."""
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5", "d_model": 512, "num_heads": 6,
                                                      "d_kv": 64, "feed_forward_proj": "gated-gelu"}))
    with pytest.raises(ValueError, match=r"^config.json: num_heads x d_kv \(6 x 64 = 384\) must equal d_model "
                                         r"\(512\)"):
        hf_config(tmp_path)


def test_the_t5_small_preset_counts_as_transformers_does():
    config = load_preset("t5-small")
    assert count_params(config).total == 60_506_624
    with torch.device("meta"):
        reference = transformers.T5ForConditionalGeneration(transformers.T5Config())
    assert sum(p.numel() for p in reference.parameters()) == 60_506_624
    assert sum(p.numel() for p in build_model(config, device="meta").parameters()) == 60_506_624


def test_a_byte_level_bpe_without_its_class_is_refused_in_one_line(tmp_path):
    """Some CodeT5 folders name no tokenizer_class: vocab.json + merges.txt and no spiece.model say it."""
    save_t5(tmp_path)
    (tmp_path / "vocab.json").write_text("{}")
    (tmp_path / "merges.txt").write_text("")
    with pytest.raises(ValueError, match=r"^this T5 folder's tokenizer is a byte-level BPE \(vocab.json \+ "
                                         r"merges.txt, as CodeT5's\); the lab reads T5's sentencepiece"):
        load_hf(tmp_path)
