"""Folders as transformers 5.24 writes and reads them (issue 38, items 1 and 2): T5's rescale read from
`scale_decoder_outputs` (5.24 always writes `tie_word_embeddings: true`), and a stored output layer that differs
from the embedding kept apart under a config that says "tied", in every family with a tied head, as 5.24's
`tie_weights` keeps both. Logits compared with transformers' own `from_pretrained` on the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hf_family_fixtures import ENCODER, randomise, save_causal

from tui_lab.hf import load_hf
from tui_lab.loading import load_model

transformers = pytest.importorskip("transformers")

T5_SMALL = dict(
    vocab_size=168,
    d_model=32,
    d_kv=8,
    num_heads=4,
    d_ff=48,
    num_layers=2,
    num_decoder_layers=2,
    relative_attention_num_buckets=8,
    relative_attention_max_distance=20,
    decoder_start_token_id=0,
    pad_token_id=0,
    eos_token_id=1,
)


def _config(folder: Path, **changes) -> dict:
    path = folder / "config.json"
    data = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    return data


def _max_diff(folder: Path, encoder_decoder: bool = False) -> tuple[float, torch.Tensor, object]:
    """(max |ours - transformers'| over a batch of logits, transformers' logits, our model)."""
    ours, _ = load_hf(folder)
    g = torch.Generator().manual_seed(1)
    if encoder_decoder:
        auto = transformers.AutoModelForSeq2SeqLM.from_pretrained(str(folder)).eval()
        src, tgt = torch.randint(2, 60, (2, 11), generator=g), torch.randint(2, 60, (2, 9), generator=g)
        with torch.no_grad():
            want, got = auto(input_ids=src, decoder_input_ids=tgt).logits, ours(src, tgt)
    else:
        kind = (
            transformers.AutoModelForMaskedLM
            if ours.config.family == "encoder-only"
            else transformers.AutoModelForCausalLM
        )
        auto = kind.from_pretrained(str(folder)).eval()
        x = torch.randint(0, 60, (2, 9), generator=g)
        with torch.no_grad():
            want, got = auto(x).logits, ours(x)
    return (got - want).abs().max().item(), want, ours


def _own_head(model) -> None:
    """An output layer unlike the embedding (what a fine-tune that untied the two leaves)."""
    torch.manual_seed(7)
    with torch.no_grad():
        model.get_output_embeddings().weight.normal_(0.0, 0.5)


@pytest.mark.parametrize("ffn", ["gated-gelu", "gated-relu", "gelu_new"])
def test_a_t5_saved_by_transformers_5_is_not_rescaled(tmp_path, ffn):
    """A v1.1-shaped T5 made and saved by 5.24: tie_word_embeddings true, scale_decoder_outputs false. The lab read
    the first alone and scaled by d_model^-0.5 (logits 0.18x at d_model 32); gated-relu and gelu_new were refused."""
    model = transformers.T5ForConditionalGeneration(
        transformers.T5Config(**T5_SMALL, feed_forward_proj=ffn, tie_word_embeddings=False)
    )
    randomise(model).save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert (saved["tie_word_embeddings"], saved["scale_decoder_outputs"]) == (True, False)
    diff, want, ours = _max_diff(tmp_path, encoder_decoder=True)
    assert diff < 1e-4 and want.abs().max() > 0.1  # scaled by 32 ** -0.5 it would be off by > 0.08
    assert (ours.config.output_scale, ours.config.tie_embeddings) == ("none", True)


@pytest.mark.parametrize(
    "keys, scaled",
    [
        ({"tie_word_embeddings": True, "scale_decoder_outputs": True}, True),  # original T5 saved by 5.24
        ({"tie_word_embeddings": None, "scale_decoder_outputs": None}, True),  # neither key: T5Config's default
        ({"tie_word_embeddings": False, "scale_decoder_outputs": None}, False),  # a 4.x v1.1 folder
        ({"tie_word_embeddings": False, "scale_decoder_outputs": True}, True),  # the 5.24 key wins
    ],
)
def test_t5_rescale_follows_t5config(tmp_path, keys, scaled):
    randomise(transformers.T5ForConditionalGeneration(transformers.T5Config(**T5_SMALL))).save_pretrained(tmp_path)
    _config(tmp_path, **keys)
    assert transformers.AutoConfig.from_pretrained(str(tmp_path)).scale_decoder_outputs is scaled
    diff, _, ours = _max_diff(tmp_path, encoder_decoder=True)
    assert diff < 1e-4
    assert ours.config.output_scale == ("inv_sqrt_d_model" if scaled else "none")


def test_a_flan_folder_resaved_by_transformers_5_keeps_its_head(tmp_path):
    """FLAN's shape (own lm_head) loaded and saved again by 5.24: tie_word_embeddings true, scale false, and both
    shared.weight and lm_head.weight stored. The lab dropped the head: greedy differed from token 0."""
    model = randomise(
        transformers.T5ForConditionalGeneration(
            transformers.T5Config(**T5_SMALL, feed_forward_proj="gated-gelu", tie_word_embeddings=False)
        )
    )
    model.lm_head.weight = torch.nn.Parameter(torch.randn(168, 32) * 0.5)  # 5.24 ties it: a head of its own
    model.save_pretrained(tmp_path)
    diff, _, ours = _max_diff(tmp_path, encoder_decoder=True)
    assert diff < 1e-4 and not ours.config.tie_embeddings
    reference = transformers.T5ForConditionalGeneration.from_pretrained(str(tmp_path)).eval()
    src = torch.randint(2, 160, (1, 10), generator=torch.Generator().manual_seed(3))
    from tui_lab.generation import generate

    want = reference.generate(input_ids=src, max_new_tokens=12, do_sample=False)
    assert generate(ours, src, 12, temperature=0.0, bos_id=0, eos_id=1).tolist() == want.tolist()


def _gpt2(folder: Path):
    config = transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=4, vocab_size=61, n_positions=64, tie_word_embeddings=False
    )
    return randomise(transformers.GPT2LMHeadModel(config))


def _llama(folder: Path):
    return save_causal("llama", folder, tie_word_embeddings=False)


def _marian(folder: Path):
    config = transformers.MarianConfig(
        d_model=32,
        encoder_ffn_dim=48,
        decoder_ffn_dim=48,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        vocab_size=61,
        pad_token_id=60,
        decoder_start_token_id=60,
        eos_token_id=0,
        max_position_embeddings=64,
        tie_word_embeddings=False,
    )
    model = randomise(transformers.MarianMTModel(config))
    with torch.no_grad():  # untied, transformers keeps three tables: one embedding, as Marian has
        for table in (model.model.encoder.embed_tokens, model.model.decoder.embed_tokens):
            table.weight.copy_(model.model.shared.weight)
    return model


def _bert(folder: Path):
    config = transformers.BertConfig(**ENCODER, vocab_size=61, max_position_embeddings=64, tie_word_embeddings=False)
    return randomise(transformers.BertForMaskedLM(config))


@pytest.mark.parametrize("make", [_gpt2, _llama, _marian, _bert], ids=["gpt2", "llama", "marian", "bert"])
def test_a_stored_head_that_differs_is_kept_under_a_tied_config(tmp_path, make):
    """config.json says tied, the weights hold a head of their own: transformers keeps both (with a warning); the
    lab dropped the head (Llama: off by 1.5, no message). Now: equal logits, and the label says so in one line."""
    model = make(tmp_path)
    _own_head(model)
    model.save_pretrained(tmp_path)
    _config(tmp_path, tie_word_embeddings=True)
    diff, _, ours = _max_diff(tmp_path, encoder_decoder=make is _marian)
    assert diff < 1e-4 and not ours.config.tie_embeddings
    label = load_model("hf", str(tmp_path)).label
    assert "ties the output layer to the embedding, but the weights store" in label and "\n" not in label


def test_an_equal_stored_head_stays_tied(tmp_path):
    """A .bin-era folder stores the head beside the embedding, the same tensor: one parameter, as transformers."""
    model = save_causal("llama", tmp_path, tie_word_embeddings=True)
    from safetensors.torch import save_file

    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    state["lm_head.weight"] = state["model.embed_tokens.weight"].clone()
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    diff, _, ours = _max_diff(tmp_path)
    assert diff < 1e-4 and ours.lm_head.weight is ours.tok_embed.weight


def test_a_head_stored_without_its_embedding_becomes_the_embedding(tmp_path):
    """transformers ties the other way round when only the head is stored (tie_weights' swap)."""
    model = save_causal("llama", tmp_path, tie_word_embeddings=True)
    from safetensors.torch import save_file

    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    state["lm_head.weight"] = state.pop("model.embed_tokens.weight")
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    diff, _, ours = _max_diff(tmp_path)
    assert diff < 1e-4 and ours.lm_head.weight is ours.tok_embed.weight
