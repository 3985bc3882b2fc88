"""lora: the trainable count is exactly rank x (in + out) per adapted Linear, and the merged checkpoint loads in
the lab with the adapted model's logits."""

import pytest
import torch
from peft import get_peft_model

from tui_lab import build_model
from tui_lab.checkpoint import load_checkpoint
from tui_lab.config import ModelConfig
from tui_lab.experiments import get
from tui_lab.experiments.lora import adapted_linears, expected_trainable, lora_config, new_text


@pytest.mark.parametrize("family, rank, targets", [
    ("decoder-only", 4, ("qkv", "out")), ("decoder-only", 1, ("qkv",)), ("encoder-decoder", 3, ("qkv", "out", "kv")),
])
def test_trainable_params_are_rank_times_in_plus_out_per_adapted_linear(family, rank, targets):
    layers = {"decoder-only": dict(decoder_layers=2), "encoder-decoder": dict(encoder_layers=1, decoder_layers=1)}
    config = ModelConfig(family=family, d_model=16, heads=2, d_ff=24, vocab=30, max_len=8, **layers[family])
    options = get("lora").resolve(sets={"lora_rank": str(rank), "targets": ",".join(targets)})
    model = build_model(config)
    e = config.d_model
    per_layer = {"qkv": rank * (e + 3 * e), "out": rank * (e + e), "kv": rank * (e + 2 * e)}
    blocks = config.encoder_layers + config.decoder_layers
    # decoder blocks of an encoder-decoder have a second 'out' (cross-attention) and the 'kv' projection
    want = sum(per_layer[t] * blocks for t in targets if t != "kv")
    if family == "encoder-decoder":
        want += sum(per_layer[t] * config.decoder_layers for t in targets if t in ("out", "kv"))
    assert expected_trainable(model, options) == want and adapted_linears(model, options["targets"])
    peft_model = get_peft_model(model, lora_config(options))
    assert sum(p.numel() for p in peft_model.parameters() if p.requires_grad) == want


def test_the_new_text_is_deterministic_and_new():
    assert new_text(5, seed=1) == new_text(5, seed=1) and "plus" in new_text(50)


def test_a_tiny_run_counts_exactly_trains_both_and_saves_a_merged_checkpoint(tmp_path):
    exp = get("lora")
    options = exp.resolve(sets={"steps": "3", "batch_size": "2", "seq_len": "16", "lora_rank": "2",
                                "out": str(tmp_path / "merged")})
    result = exp.run(options)
    s = result.scalars
    assert s["trainable_params"] == s["trainable_expected"] == 2 * (128 + 384 + 128 + 128) * 4
    assert s["full_params"] == 957_184 and s["merged_max_logit_diff"] < 1e-4
    assert [len(c.xs) for c in result.plots["loss"].curves] == [3, 3]
    loaded = load_checkpoint(tmp_path / "merged")
    assert loaded.config.name == "gpt2-toy-english" and not any("lora" in n for n, _ in loaded.model.named_parameters())
    assert loaded.model(torch.tensor([[1, 2, 3]])).shape == (1, 3, 1024)


def test_bad_rank_is_one_line():
    with pytest.raises(ValueError, match=r"lora_rank \(0\) must be at least 1"):
        get("lora").resolve(sets={"lora_rank": "0"})
