import itertools

import pytest
import torch
from torch import nn

from tui_lab import build_model, load_preset
from tui_lab.analysis import count_params, shape_trace
from tui_lab.analysis.params import attention_params
from tui_lab.config import CHOICES, ModelConfig


def test_gpt2_small_counts_exactly():
    count = count_params(load_preset("gpt2-small"))
    assert count.total == 124_439_808
    assert count.token_embedding == 38_597_376
    assert count.position_embedding == 786_432
    assert count.decoder_layer == 7_087_872
    assert count.output == 0  # tied


def test_transformer_2017_base_counts_exactly():
    count = count_params(load_preset("transformer-2017-base"))
    assert count.total == 63_082_496
    assert count.token_embedding == 18_944_000
    assert count.encoder_total == 18_914_304
    assert count.decoder_total == 25_224_192


def test_seed_layer_counts_match_torch_nn():
    c = load_preset("transformer-2017-base")
    count = count_params(c)
    assert count.encoder_layer == 3_152_384
    assert count.decoder_layer == 4_204_032
    enc = nn.TransformerEncoderLayer(512, 8, dim_feedforward=2048)
    dec = nn.TransformerDecoderLayer(512, 8, dim_feedforward=2048)
    assert sum(p.numel() for p in enc.parameters()) == count.encoder_layer
    assert sum(p.numel() for p in dec.parameters()) == count.decoder_layer


@pytest.mark.parametrize("heads", [1, 2, 8, 16, 64])
def test_attention_params_do_not_depend_on_heads(heads):
    c = load_preset("transformer-2017-base", heads=heads)
    assert attention_params(c) == 1_050_624
    assert attention_params(c) == sum(p.numel() for p in nn.MultiheadAttention(512, heads).parameters())


def test_big_presets_count_on_meta_device_match():
    for name in ("gpt2-small", "transformer-2017-base"):
        config = load_preset(name)
        model = build_model(config, device="meta")
        assert sum(p.numel() for p in model.parameters()) == count_params(config).total


# The full product over the first axes and their first values (3 x 2 x 2 x 4 x 4 x 8 = 1,536 builds);
# every value added since, and every later axis, is covered pairwise by tests/core/config/test_config_axes.py, so the
# product stays quick as the table grows.
PRODUCT = {"family": CHOICES["family"], "norm": ("layernorm", "rmsnorm"), "norm_position": ("post", "pre"),
           "positions": ("sinusoidal", "learned", "rope", "alibi"),
           "activation": ("relu", "gelu", "gelu_tanh", "swiglu")}
AXES = list(PRODUCT)


@pytest.mark.parametrize(
    "combo", list(itertools.product(*PRODUCT.values(), [True, False], [True, False], [True, False]))
)
def test_every_variant_counts_match_the_built_model(combo):
    *axes, tie, bias, final_norm = combo
    values = dict(zip(AXES, axes, strict=True))
    layers = {"encoder-decoder": (2, 1), "decoder-only": (0, 2), "encoder-only": (2, 0)}[values["family"]]
    config = ModelConfig(encoder_layers=layers[0], decoder_layers=layers[1], d_model=16, heads=2, d_ff=24,
                         vocab=30, max_len=12, tie_embeddings=tie, bias=bias, final_norm=final_norm, **values)
    model = build_model(config, device="meta")
    assert sum(p.numel() for p in model.parameters()) == count_params(config).total


def test_shape_trace_leaf_rows_sum_to_the_total():
    for name in ("gpt2-small", "transformer-2017-base"):
        config = load_preset(name)
        rows = shape_trace(config, batch=2, seq_len=16)
        leaves = [r for r in rows if not r.kind.endswith("block")]
        assert sum(r.params for r in leaves) == count_params(config).total


def test_shape_trace_matches_hooks_on_the_real_model():
    config = load_preset("transformer-2017-toy")
    model = build_model(config).eval()
    seen = {}

    def keep_first(name):
        def hook(module, inputs, output):  # returns None, so the output is left as it is
            seen.setdefault(name, output)
        return hook

    for name, module in model.named_modules():
        if name:
            module.register_forward_hook(keep_first(name))
    src, tgt = torch.randint(0, config.vocab, (3, 5)), torch.randint(0, config.vocab, (3, 7))
    model(src, tgt)
    for row in shape_trace(config, batch=3, seq_len=7, src_len=5):
        out = seen.get(row.path)
        if isinstance(out, torch.Tensor) and row.path != "tok_embed" and "pos_embed" not in row.path:
            assert tuple(out.shape) == row.output_shape, row.path
        elif isinstance(out, tuple):  # attention modules return (out, weights)
            assert tuple(out[0].shape) == row.output_shape, row.path
