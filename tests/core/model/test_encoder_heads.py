"""BERT's and ViT's pieces (issue 14): the head, token types, embedding norm, output bias, image patches.

Counts equal `transformers`' for the real presets, the tiny models equal `transformers`' own with the same
weights, and bad values are refused in one line naming the field.
"""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model, load_preset
from tui_lab.analysis import count_params, shape_trace
from tui_lab.config import ModelConfig

TINY = dict(family="encoder-only", encoder_layers=2, decoder_layers=0, d_model=32, heads=4, d_ff=64, vocab=50,
            max_len=16, dropout=0.0)
BERT = dict(TINY, norm_position="post", norm_eps=1e-12, activation="gelu", final_norm=False, head="mlm",
            token_types=2, embedding_norm=True, output_bias=True)
VIT = dict(TINY, vocab=0, max_len=17, norm_eps=1e-12, activation="gelu", input="patches", image_size=8,
           patch_size=2, channels=3, head="classifier", classes=5, tie_embeddings=False)


def test_presets_count_as_transformers_does():
    assert count_params(load_preset("bert-base")).total == 109_514_298
    assert count_params(load_preset("vit-base-16")).total == 86_567_656
    for name in ("bert-base", "vit-base-16"):
        config = load_preset(name)
        model = build_model(config, device="meta")
        assert sum(p.numel() for p in model.parameters()) == count_params(config).total


@pytest.mark.parametrize("changes", [BERT, VIT, dict(TINY, head="classifier", classes=3)])
def test_shape_rows_sum_to_the_total_and_match_the_output(changes):
    config = ModelConfig(**changes)
    rows = [r for r in shape_trace(config, batch=2, seq_len=7) if not r.kind.endswith("block")]
    assert sum(r.params for r in rows) == count_params(config).total
    model = build_model(config).eval()
    x = torch.rand(2, 3, 8, 8) if config.input == "patches" else torch.randint(0, config.vocab, (2, 7))
    assert tuple(model(x).shape) == rows[-1].output_shape


def test_the_text_classifier_pools_only_real_tokens():
    model = build_model(ModelConfig(**dict(TINY, head="classifier", classes=3))).eval()
    ids = torch.randint(1, 50, (1, 5))
    padded = torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    mask = torch.tensor([[True] * 5 + [False] * 3])
    assert torch.allclose(model(ids), model(padded, src_mask=mask), atol=1e-5)
    assert not torch.allclose(model(ids), model(padded), atol=1e-5)


def test_output_bias_applies_to_every_family():
    for family, layers in (("decoder-only", (0, 1)), ("encoder-decoder", (1, 1))):
        c = ModelConfig(family=family, encoder_layers=layers[0], decoder_layers=layers[1], output_bias=True)
        assert count_params(c).total - count_params(c.replace(output_bias=False)).total == c.vocab
        assert build_model(c, device="meta").lm_head.bias.shape == (c.vocab,)


@pytest.mark.parametrize("changes, message", [
    (dict(TINY, head="classifier"), r"^classes \(0\) must be at least 2 for head 'classifier'$"),
    (dict(VIT, image_size=9), r"^image_size \(9\) must be divisible by patch_size \(2\)$"),
    (dict(VIT, channels=0), r"^channels \(0\) must be a positive integer for input 'patches'$"),
    (dict(VIT, vocab=50), r"^vocab \(50\) must be 0 for input 'patches' \(no token table\)$"),
    (dict(VIT, max_len=16), r"^max_len \(16\) must be 17 for input 'patches': .*class token$"),
    (dict(VIT, head="mlm"), r"^head \('mlm'\) must be 'classifier' for input 'patches'$"),
    (dict(TINY, token_types=-1), r"^token_types \(-1\) must be 0 or more$"),
    (dict(TINY, family="decoder-only", encoder_layers=0, decoder_layers=1, head="mlm"),
     r"^head \('mlm'\) applies to encoder-only models only; this one is decoder-only$"),
])
def test_bad_values_are_refused_in_one_line(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**changes)


def test_bad_values_on_the_command_line_exit_2_with_one_line(capsys):
    from tui_lab.cli import main

    assert main(["info", "--preset", "vit-base-16", "--set", "patch_size=15"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "image_size (224) must be divisible by patch_size (15)" in err


def test_a_wrong_image_shape_is_one_line():
    model = build_model(ModelConfig(**VIT))
    with pytest.raises(ValueError, match=r"^pixel_values must be \(N, 3, 8, 8\), got \(1, 3, 9, 9\)$"):
        model(torch.rand(1, 3, 9, 9))


# -- the same numbers as transformers' own models, weights copied --------------------------------------


def _copy_layer(ours, q, k, v, attn_out, up, down) -> None:
    with torch.no_grad():
        ours.attn.qkv.weight.copy_(torch.cat([q.weight, k.weight, v.weight]))
        ours.attn.qkv.bias.copy_(torch.cat([q.bias, k.bias, v.bias]))
        for dst, src in ((ours.attn.out, attn_out), (ours.ffn.up, up), (ours.ffn.down, down)):
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)


def _copy_norm(dst, src) -> None:
    with torch.no_grad():
        dst.weight.copy_(src.weight)
        dst.bias.copy_(src.bias)


def test_bert_equals_transformers_bert_for_masked_lm():
    transformers = pytest.importorskip("transformers")
    hf_config = transformers.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=64, max_position_embeddings=16)
    hf = transformers.BertForMaskedLM(hf_config).eval()
    model = build_model(ModelConfig(**BERT)).eval()
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in hf.parameters())
    emb, head = hf.bert.embeddings, hf.cls.predictions
    with torch.no_grad():
        model.tok_embed.weight.copy_(emb.word_embeddings.weight)
        model.type_embed.weight.copy_(emb.token_type_embeddings.weight)
        model.pos_embed.weight.copy_(emb.position_embeddings.weight)
        model.head.dense.weight.copy_(head.transform.dense.weight)
        model.head.dense.bias.copy_(head.transform.dense.bias)
        model.lm_head.bias.copy_(head.bias)
    _copy_norm(model.embed_norm, emb.LayerNorm)
    _copy_norm(model.head.norm, head.transform.LayerNorm)
    for ours, layer in zip(model.encoder, hf.bert.encoder.layer, strict=True):
        a = layer.attention
        _copy_layer(ours, a.self.query, a.self.key, a.self.value, a.output.dense, layer.intermediate.dense,
                    layer.output.dense)
        _copy_norm(ours.attn_norm, a.output.LayerNorm)  # post-LN: after the attention's residual
        _copy_norm(ours.ffn_norm, layer.output.LayerNorm)
    ids, types = torch.randint(0, 50, (2, 9)), torch.randint(0, 2, (2, 9))
    mask = torch.ones(2, 9, dtype=torch.bool)
    mask[1, 6:] = False
    with torch.no_grad():
        theirs = hf(input_ids=ids, token_type_ids=types, attention_mask=mask.long()).logits
        ours = model(ids, src_mask=mask, token_type_ids=types)
    assert (ours - theirs)[mask].abs().max() < 1e-4


def test_vit_equals_transformers_vit_for_image_classification():
    transformers = pytest.importorskip("transformers")
    hf_config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=64, image_size=8, patch_size=2, num_channels=3,
                                       num_labels=5)
    hf = transformers.ViTForImageClassification(hf_config).eval()
    model = build_model(ModelConfig(**VIT)).eval()
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in hf.parameters())
    emb = hf.vit.embeddings
    with torch.no_grad():
        model.patch_embed.proj.weight.copy_(emb.patch_embeddings.projection.weight)
        model.patch_embed.proj.bias.copy_(emb.patch_embeddings.projection.bias)
        model.patch_embed.cls_token.copy_(emb.cls_token)
        model.pos_embed.weight.copy_(emb.position_embeddings[0])
        model.head.out.weight.copy_(hf.classifier.weight)
        model.head.out.bias.copy_(hf.classifier.bias)
    _copy_norm(model.encoder_norm, hf.vit.layernorm)
    for ours, layer in zip(model.encoder, hf.vit.layers, strict=True):  # transformers 5's layout
        a = layer.attention
        _copy_layer(ours, a.q_proj, a.k_proj, a.v_proj, a.o_proj, layer.mlp.fc1, layer.mlp.fc2)
        _copy_norm(ours.attn_norm, layer.layernorm_before)
        _copy_norm(ours.ffn_norm, layer.layernorm_after)
    pixels = torch.randn(3, 3, 8, 8)
    with torch.no_grad():
        theirs = hf(pixel_values=pixels).logits
        ours = model(pixels)
    assert ours.shape == (3, 5)
    assert (ours - theirs).abs().max() < 1e-4
