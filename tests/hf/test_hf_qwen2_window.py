"""Qwen2's sliding window: on every layer (use_sliding_window, max_window_layers 0) it opens and agrees with
transformers past the window, cached generation included; on some layers only it is refused with that reason
(the message used to name the every-layer case as the unsupported one)."""

from __future__ import annotations

import pytest
import torch
from hf_family_fixtures import missing_axes, save_causal

from tui_lab.generation import generate
from tui_lab.hf import hf_config, load_hf

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.skipif(bool(missing_axes(("kv_heads", "qkv_bias", "attention_window"))),
                                reason="needs the config axes kv_heads, qkv_bias and attention_window")


def test_a_window_on_every_layer_agrees_with_transformers_past_the_window(tmp_path):
    reference = save_causal("qwen2", tmp_path, use_sliding_window=True, sliding_window=4, max_window_layers=0)
    assert reference.config.layer_types == ["sliding_attention"] * 2
    ours, _ = load_hf(tmp_path)
    assert ours.config.attention_window == 4
    ids = torch.randint(0, 61, (2, 20), generator=torch.Generator().manual_seed(1))  # 5x the window
    with torch.no_grad():
        assert (ours(ids) - reference(ids).logits).abs().max().item() < 1e-4
    prompt = ids[:1, :6]
    theirs = reference.generate(prompt, max_new_tokens=20, do_sample=False, eos_token_id=None, pad_token_id=0)
    assert generate(ours, prompt, 20, temperature=0.0).tolist() == theirs.tolist()


def test_a_window_on_no_layer_is_full_attention(tmp_path):
    save_causal("qwen2", tmp_path, use_sliding_window=True, sliding_window=4, max_window_layers=2)
    assert hf_config(tmp_path).attention_window == 0


def test_a_window_on_some_layers_only_is_refused_with_the_true_reason(tmp_path):
    save_causal("qwen2", tmp_path, use_sliding_window=True, sliding_window=4, max_window_layers=1)
    with pytest.raises(ValueError) as err:
        hf_config(tmp_path)
    message = str(err.value)
    assert message == ("config.json: use_sliding_window is true and only layers 1..1 of 2 have the window (layers "
                       "from max_window_layers on); the lab's window applies to every layer or none")
    assert "one window for every layer is" not in message
