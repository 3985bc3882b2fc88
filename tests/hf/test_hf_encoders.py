"""`load_hf` on random-weight BertForMaskedLM and ViTForImageClassification: same logits as transformers."""

from __future__ import annotations

import json

import pytest
import torch
from hf_family_fixtures import save_bert, save_vit, save_wordpiece

from tui_lab.analysis import count_params
from tui_lab.hf import hf_config, load_hf

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bert")
    return folder, save_bert(folder)


@pytest.fixture(scope="module")
def vit(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vit")
    return folder, save_vit(folder)


def test_bert_logits_match_transformers(bert):
    folder, reference = bert
    ours, tokenizer = load_hf(folder)
    assert tokenizer is None and ours.config.head == "mlm" and ours.config.token_types == 2
    g = torch.Generator().manual_seed(1)
    ids, types = torch.randint(0, 61, (2, 12), generator=g), torch.randint(0, 2, (2, 12), generator=g)
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[1, 9:] = False
    with torch.no_grad():
        theirs = reference(input_ids=ids, token_type_ids=types, attention_mask=mask.long()).logits
        mine = ours(ids, src_mask=mask, token_type_ids=types)
        plain = (ours(ids) - reference(input_ids=ids).logits).abs().max().item()  # types default to 0
    assert (mine - theirs)[mask].abs().max().item() < 1e-4 and plain < 1e-4
    assert ours.lm_head.weight is ours.tok_embed.weight  # the decoder stays tied, as in BERT
    assert count_params(ours.config).total == sum(p.numel() for p in reference.parameters())
    assert hf_config(folder) == ours.config


def test_an_untied_bert_keeps_its_own_decoder(tmp_path):
    reference = save_bert(tmp_path, tie_word_embeddings=False)
    ours, _ = load_hf(tmp_path)
    ids = torch.randint(0, 61, (1, 8), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert (ours(ids) - reference(input_ids=ids).logits).abs().max().item() < 1e-4
    assert ours.lm_head.weight is not ours.tok_embed.weight


def test_a_pretraining_checkpoint_with_pooler_and_old_names_loads(tmp_path):
    """bert-base-uncased's layout: the pooler and next-sentence head beside the MLM head, LayerNorm gamma/beta."""
    from safetensors.torch import load_file, save_file

    reference = save_bert(tmp_path)
    path = tmp_path / "model.safetensors"
    state = load_file(path)
    state = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
             for k, v in state.items()}
    state |= {"bert.pooler.dense.weight": torch.zeros(32, 32), "cls.seq_relationship.bias": torch.zeros(2)}
    save_file(state, path)
    ours, _ = load_hf(tmp_path)
    ids = torch.randint(0, 61, (1, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert (ours(ids) - reference(input_ids=ids).logits).abs().max().item() < 1e-4


def test_bert_wordpiece_tokenizer_and_mask(tmp_path):
    from tui_lab.data.masking import mask_id, mask_text_ids

    save_bert(tmp_path)
    save_wordpiece(tmp_path)
    _, tokenizer = load_hf(tmp_path)
    hf = tokenizer.hf
    assert (tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id, tokenizer.unk_id) == tuple(
        hf.token_to_id(t) for t in ("[PAD]", "[CLS]", "[SEP]", "[UNK]"))
    reference = transformers.BertTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    text = "The cat saw the dog"
    assert tokenizer.encode(text) == reference.encode(text, add_special_tokens=False)
    assert tokenizer.decode(tokenizer.encode(text)) == "the cat saw the dog"
    ids, labels = mask_text_ids("the [MASK] sat", tokenizer)
    assert mask_id(tokenizer) == hf.token_to_id("[MASK]") and labels[1] == "[MASK]" and len(ids) == 3


def test_vit_logits_match_transformers(vit):
    folder, reference = vit
    ours, tokenizer = load_hf(folder)
    assert tokenizer is None
    pixels = torch.randn(3, 3, 8, 8, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        mine, theirs = ours(pixels), reference(pixel_values=pixels).logits
    assert mine.shape == (3, 5) and (mine - theirs).abs().max().item() < 1e-4
    assert count_params(ours.config).total == sum(p.numel() for p in reference.parameters())
    assert hf_config(folder) == ours.config


def _rewrite(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("save, changes, message", [
    (save_bert, {"architectures": ["BertModel"]}, "architectures is ['BertModel']; the lab opens bert checkpoints "
                                                  "with their head (BertForMaskedLM or BertForPreTraining)"),
    (save_bert, {"position_embedding_type": "relative_key"}, "position_embedding_type 'relative_key' is not"),
    (save_bert, {"is_decoder": True}, "is_decoder is true"),
    (save_bert, {"hidden_act": "mish"}, "hidden_act 'mish' is not supported"),
    (save_vit, {"qkv_bias": False}, "qkv_bias is false"),
    (save_vit, {"architectures": ["ViTModel"]}, "architectures is ['ViTModel']"),
    (save_vit, {"image_size": 9}, "image_size (9) must be divisible by patch_size (2)"),
    (save_vit, {"id2label": {"0": "only"}}, "id2label has 1 label"),
])
def test_unsupported_options_are_refused_in_one_line(tmp_path, save, changes, message):
    save(tmp_path)
    _rewrite(tmp_path, **changes)
    with pytest.raises(ValueError) as err:
        load_hf(tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_bert_model_without_its_head_is_refused_by_the_missing_tensor(tmp_path):
    """A BertModel folder whose config.json claims BertForMaskedLM: the weights say what is missing."""
    model = transformers.BertModel(transformers.BertConfig(hidden_size=32, intermediate_size=48, num_hidden_layers=1,
                                                           num_attention_heads=4, vocab_size=61))
    model.save_pretrained(tmp_path)
    _rewrite(tmp_path, architectures=["BertForMaskedLM"])
    with pytest.raises(ValueError, match=r"^unexpected tensor embeddings\.|^checkpoint lacks tensor"):
        load_hf(tmp_path)
