import dataclasses
import subprocess
import sys

import pytest

from tui_lab import load_preset
from tui_lab.config import ModelConfig, parse_value
from tui_lab.presets import list_presets, paper_claims, presets_dir


def test_presets_are_listed_and_every_field_is_present():
    assert set(list_presets()) >= {"transformer-2017-base", "transformer-2017-toy", "gpt2-small", "gpt2-toy"}
    for name in list_presets():
        assert load_preset(name).source


def test_2017_preset_is_post_ln_sinusoidal_relu_scaled_shared():
    c = load_preset("transformer-2017-base")
    assert (c.family, c.encoder_layers, c.decoder_layers, c.d_model, c.heads, c.d_ff) == (
        "encoder-decoder", 6, 6, 512, 8, 2048)
    assert (c.norm_position, c.positions, c.activation, c.embedding_scale) == (
        "post", "sinusoidal", "relu", "sqrt_d_model")
    assert c.tie_embeddings and not c.final_norm
    assert paper_claims("transformer-2017-base")["params"] == "65M"


def test_gpt2_preset_is_pre_ln_learned_gelu_tanh_tied():
    c = load_preset("gpt2-small")
    assert (c.decoder_layers, c.d_model, c.heads, c.d_ff, c.vocab, c.max_len) == (12, 768, 12, 3072, 50257, 1024)
    assert (c.norm_position, c.positions, c.activation, c.final_norm, c.tie_embeddings) == (
        "pre", "learned", "gelu_tanh", True, True)


def test_toys_keep_the_architectural_choices():
    for big, toy in (("gpt2-small", "gpt2-toy"), ("transformer-2017-base", "transformer-2017-toy")):
        b, t = load_preset(big), load_preset(toy)
        for axis in ("family", "norm", "norm_position", "positions", "activation", "embedding_scale",
                     "tie_embeddings", "final_norm"):
            assert getattr(b, axis) == getattr(t, axis), axis


def test_overrides_and_shortcuts():
    c = load_preset("transformer-2017-base", layers=2, d_model=64, heads=2, d_ff=128, vocab=100, dropout=0.0)
    assert (c.encoder_layers, c.decoder_layers, c.d_model, c.vocab, c.dropout) == (2, 2, 64, 100, 0.0)
    assert load_preset("gpt2-small", layers=3).encoder_layers == 0


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(d_model=100, heads=3), r"d_model \(100\) must be divisible by heads \(3\)"),
        (dict(d_model=0), r"d_model \(0\) must be a positive integer"),
        (dict(layers=-1), r"layers \(-1\) must be a positive integer"),
        (dict(norm="groupnorm"), r"norm \('groupnorm'\) must be one of: layernorm, rmsnorm, batchnorm"),
        (dict(heads="8"), r"heads must be an integer"),
        (dict(dropout=1.5), r"dropout \(1.5\) must be in \[0, 1\)"),
        (dict(colour=3), r"unknown field 'colour'"),
    ],
)
def test_validation_names_the_field_and_the_rule(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_preset("gpt2-small", **overrides)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError, match="known presets: .*gpt2-small"):
        load_preset("gpt5")


def test_parse_value_types():
    assert parse_value("tie_embeddings", "false") is False
    assert parse_value("dropout", "0.2") == 0.2
    assert parse_value("layers", "3") == 3
    with pytest.raises(ValueError, match="heads must be an integer"):
        parse_value("heads", "eight")


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModelConfig().d_model = 3  # type: ignore[misc]


def test_preset_files_ship_inside_the_wheel():
    # The package looks for presets inside itself first (an installed wheel), else at the repo's top.
    assert (presets_dir() / "gpt2-small.toml").is_file()


def test_importing_the_core_does_not_import_textual_or_torch():
    code = ("import sys, tui_lab, tui_lab.analysis, tui_lab.presets; "
            "print('textual' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
