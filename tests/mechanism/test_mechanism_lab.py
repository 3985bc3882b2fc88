"""The Python API (tui_lab/mechanism/lab.py, lab_cache.py): `Lab.to_tokens` / `to_str_tokens`, and the cache's
readouts as TransformerLens defines them, each against a direct computation on a tiny model (float64)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.data.byte_codec import ByteCodec
from tui_lab.mechanism.attribution import head_logit_attribution
from tui_lab.mechanism.lab import Lab
from tui_lab.mechanism.lab_cache import LabCache
from tui_lab.mechanism.lens import lens_logits

TEXT = "abcab"  # one token per byte
A, B = ord("c"), ord("a")  # answer and wrong token


def _lab(**changes) -> Lab:
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=256, max_len=32,
                dropout=0.0, bias=True, positions="learned")
    torch.manual_seed(0)
    model = build_model(ModelConfig(**{**base, **changes})).double().eval()
    with torch.no_grad():  # gammas and biases away from 1 and 0, so a formula that drops one shows
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return Lab(model, ByteCodec(256))


def test_to_tokens_and_to_str_tokens():
    lab = _lab()
    assert lab.to_tokens("ab").tolist() == [[97, 98]]
    assert lab.to_tokens(["ab", "cd"]).tolist() == [[97, 98], [99, 100]]
    assert lab.to_str_tokens("ab") == ["a", "b"] and lab.to_str_tokens(torch.tensor([[99]])) == ["c"]
    assert lab.to_single_token("c") == 99
    with pytest.raises(ValueError, match="one length; these are 2, 3"):
        lab.to_tokens(["ab", "cde"])
    with pytest.raises(ValueError, match="at most 32"):
        lab.to_tokens("x" * 33)
    with pytest.raises(ValueError, match="must be one token"):
        lab.to_single_token("cd")
    logits, cache = lab.run_with_cache(TEXT)
    torch.testing.assert_close(logits, lab.model(lab.to_tokens(TEXT)))
    assert isinstance(cache, LabCache) and "blocks.1.attn.hook_z" in cache
    assert "blocks.1.attn.hook_result" not in cache  # H times the stream: only when named


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_accumulated_resid_is_the_stream_and_its_final_rows_are_the_logit_lens(norm):
    lab = _lab(norm=norm)
    logits, cache = lab.run_with_cache(TEXT)
    stack, labels = cache.accumulated_resid(return_labels=True)
    assert labels == ["0_pre", "1_pre", "final_post"]
    torch.testing.assert_close(stack[1], cache["blocks.1.hook_resid_pre"])
    _, mid_labels = cache.accumulated_resid(layer=1, incl_mid=True, return_labels=True)
    assert mid_labels == ["0_pre", "0_mid", "1_pre"]
    assert cache.accumulated_resid(layer=1, mlp_input=True, return_labels=True)[1] == ["0_pre", "1_pre", "1_mid"]
    # the whole stream with apply_ln: each row through the final norm, so lm_head gives the lens
    lensed = lab.model.lm_head(cache.accumulated_resid(apply_ln=True))
    torch.testing.assert_close(lensed, lens_logits(lab.model, lab.to_tokens(TEXT))[1])
    torch.testing.assert_close(lensed[-1], logits)
    # cut before block 1: ln1's frozen scale; gamma and beta on top give what block 1's attention reads
    ln1 = lab.model.decoder[1].attn_norm
    row = cache.accumulated_resid(layer=1, apply_ln=True)[-1] * ln1.weight
    if norm == "layernorm":
        row = row + ln1.bias
    torch.testing.assert_close(row, cache["blocks.1.ln1.hook_normalized"])


def test_decompose_resid_adds_up_to_the_stream():
    lab = _lab()
    _, cache = lab.run_with_cache(TEXT)
    parts, labels = cache.decompose_resid(return_labels=True)
    assert labels == ["embed", "pos_embed", "0_attn_out", "0_mlp_out", "1_attn_out", "1_mlp_out"]
    torch.testing.assert_close(parts.sum(0), cache["blocks.1.hook_resid_post"])
    torch.testing.assert_close(cache.decompose_resid(layer=1).sum(0), cache["blocks.1.hook_resid_pre"])
    torch.testing.assert_close(cache.decompose_resid(layer=1, mlp_input=True).sum(0), cache["blocks.1.hook_resid_mid"])
    assert cache.decompose_resid(mode="attn", return_labels=True)[1] == ["embed", "pos_embed", "0_attn_out",
                                                                           "1_attn_out"]
    rope = _lab(positions="rope")
    assert rope.run_with_cache(TEXT)[1].decompose_resid(layer=0, return_labels=True)[1] == ["embed"]
    with pytest.raises(ValueError, match="pre-LN"):
        _lab(norm_position="post").run_with_cache(TEXT)[1].decompose_resid()


def test_stack_head_results_are_each_heads_write():
    lab = _lab()
    _, cache = lab.run_with_cache(TEXT, names=lambda n: True)  # with hook_result
    heads, labels = cache.stack_head_results(return_labels=True, incl_remainder=True)
    assert labels == [f"L{i}H{h}" for i in range(2) for h in range(4)] + ["remainder"]
    attn, z = lab.model.decoder[1].attn, cache["blocks.1.attn.hook_z"]
    torch.testing.assert_close(heads[4 + 3], z[:, :, 3] @ attn.out.weight[:, 24:32].T)  # L1H3 = z W_O
    torch.testing.assert_close(heads.sum(0), cache["blocks.1.hook_resid_post"])
    torch.testing.assert_close(heads[4:8].sum(0) + attn.out.bias, cache["blocks.1.hook_attn_out"])
    _, z_only = lab.run_with_cache(TEXT)  # no hook_result by default: from hook_z
    torch.testing.assert_close(z_only.stack_head_results(), heads[:-1])


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_logit_attrs_add_up_to_the_logit_difference_and_give_each_heads_dla(norm):
    lab = _lab(norm=norm)
    logits, cache = lab.run_with_cache(TEXT)
    attrs = cache.logit_attrs(cache.decompose_resid(), A, B)  # (C, N, L)
    w, ln = lab.model.lm_head.weight, lab.model.decoder_norm
    out_bias = lab.model.lm_head.bias if lab.model.lm_head.bias is not None else torch.zeros(256).double()
    beta = ln.bias if norm == "layernorm" else torch.zeros(32).double()  # the norm's bias term is no component's
    constant = beta @ (w[A] - w[B]) + out_bias[A] - out_bias[B]
    torch.testing.assert_close(attrs.sum(0) + constant, logits[..., A] - logits[..., B])
    heads = cache.logit_attrs(cache.stack_head_results(), "c", "a")[:, 0, -1]
    direct = head_logit_attribution(lab.model, lab.to_tokens(TEXT)[0], A, B)  # (layers, heads), lab convention
    torch.testing.assert_close(heads, direct.flatten())
    one = cache.logit_attrs(cache.decompose_resid(), A)
    torch.testing.assert_close(one.sum(0) + beta @ w[A] + out_bias[A], logits[..., A])


def test_a_cache_saves_and_loads(tmp_path):
    lab = _lab()
    _, cache = lab.run_with_cache(TEXT)
    path = tmp_path / "cache.safetensors"
    cache.save(path)
    back = lab.load_cache(path)
    assert list(back) == list(cache)
    assert all(torch.equal(back[n], cache[n]) for n in cache)
    torch.testing.assert_close(back.logit_attrs(back.stack_head_results(), A, B),
                               cache.logit_attrs(cache.stack_head_results(), A, B))
    with pytest.raises(ValueError, match="d_model 32; this model's is 64"):
        _lab(d_model=64).load_cache(path)
    with pytest.raises(ValueError, match="is not a file"):
        lab.load_cache(tmp_path / "none.safetensors")
    (tmp_path / "bad.safetensors").write_text("not a cache")
    with pytest.raises(ValueError, match="is not a saved cache"):
        lab.load_cache(tmp_path / "bad.safetensors")


def test_open_finds_a_preset_or_a_checkpoint_folder(tmp_path):
    import tui_lab
    from tui_lab.checkpoint import save_checkpoint

    lab = tui_lab.open("gpt2-toy-english")
    assert "gpt2-toy-english" in lab.label
    with pytest.raises(ValueError, match="empty"):
        lab.to_tokens([])
    save_checkpoint(tmp_path / "run", lab.model, lab.codec)
    again = tui_lab.open(tmp_path / "run")
    assert "checkpoint" in again.label
    text = "Anna walked to the river."
    assert again.to_str_tokens(text) == lab.to_str_tokens(text)
    torch.testing.assert_close(again.run_with_cache(text)[0], lab.run_with_cache(text)[0])
    with pytest.raises(ValueError):
        tui_lab.open("no-such-preset")
