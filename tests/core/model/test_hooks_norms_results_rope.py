"""The hook points TransformerLens users reach for next (tui_lab/model/hooks.py, model/norm_hooks.py): each norm's
`hook_scale` and `hook_normalized`, each head's `hook_result` before the sum, and RoPE's `hook_rot_q` / `hook_rot_k`,
each against a direct computation, and a replacement at each changing what follows as the maths says."""

from __future__ import annotations

import math

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.model.positions import apply_rope, rope_angles


def _model(**changes):
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=64,
                dropout=0.0, bias=True)
    torch.manual_seed(0)
    model = build_model(ModelConfig(**{**base, **changes})).eval()
    with torch.no_grad():  # biases and gammas away from their 0 / 1 init, so a wrong formula shows
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
@torch.no_grad()
def test_each_norms_scale_and_output_are_what_it_divides_by_and_what_the_sublayer_reads(norm):
    model = _model(norm=norm)
    ids = torch.randint(0, 40, (2, 7))
    _, cache = run_with_cache(model, ids)
    for i, block in enumerate(model.decoder):
        b = f"blocks.{i}."
        for ln, read, module in (("ln1", "hook_resid_pre", block.attn_norm), ("ln2", "hook_resid_mid", block.ffn_norm)):
            x = cache[b + read]
            if norm == "layernorm":
                scale = (x.var(-1, keepdim=True, unbiased=False) + module.eps).sqrt()
            else:
                scale = (x.pow(2).mean(-1, keepdim=True) + module.eps).sqrt()
            torch.testing.assert_close(cache[f"{b}{ln}.hook_scale"], scale)
            torch.testing.assert_close(cache[f"{b}{ln}.hook_normalized"], module(x))
    final = cache["blocks.1.hook_resid_post"]
    torch.testing.assert_close(cache["ln_final.hook_normalized"], model.decoder_norm(final))
    assert cache["ln_final.hook_scale"].shape == (2, 7, 1)
    # a doubled final scale halves the normalized stream before gamma: logits = lm_head(gamma (x - mu) / 2s + beta)
    doubled = run_with_hooks(model, ids, hooks=[("ln_final.hook_scale", lambda s, _: 2 * s)])
    centred = final - final.mean(-1, keepdim=True) if norm == "layernorm" else final
    normed = centred / (2 * cache["ln_final.hook_scale"]) * model.decoder_norm.weight
    if norm == "layernorm":
        normed = normed + model.decoder_norm.bias
    torch.testing.assert_close(doubled, model.lm_head(normed))


@torch.no_grad()
def test_a_post_ln_blocks_norm_points_sit_after_the_sum():
    model = _model(norm_position="post")
    _, cache = run_with_cache(model, torch.randint(0, 40, (1, 6)))
    torch.testing.assert_close(cache["blocks.0.ln1.hook_normalized"], cache["blocks.0.hook_resid_mid"])
    torch.testing.assert_close(cache["blocks.0.ln2.hook_normalized"], cache["blocks.0.hook_resid_post"])


@torch.no_grad()
def test_each_heads_result_is_its_write_and_they_sum_to_attn_out():
    model = _model()
    ids = torch.randint(0, 40, (2, 6))
    _, cache = run_with_cache(model, ids)
    attn = model.decoder[1].attn
    z, result = cache["blocks.1.attn.hook_z"], cache["blocks.1.attn.hook_result"]  # (N, L, H, D), (N, L, H, E)
    assert result.shape == (2, 6, 4, 32)
    for h in range(4):
        torch.testing.assert_close(result[:, :, h], z[:, :, h] @ attn.out.weight[:, h * 8:(h + 1) * 8].T)
    torch.testing.assert_close(result.sum(2) + attn.out.bias, cache["blocks.1.hook_attn_out"])
    # taking head 2's write out is zero-ablating its z, except for the bias both keep

    def drop_result(r, _):
        r = r.clone()
        r[:, :, 2] = 0
        return r

    def drop_z(v, _):
        v = v.clone()
        v[:, :, 2] = 0
        return v

    by_result = run_with_hooks(model, ids, hooks=[("blocks.1.attn.hook_result", drop_result)])
    by_z = run_with_hooks(model, ids, hooks=[("blocks.1.attn.hook_z", drop_z)])
    torch.testing.assert_close(by_result, by_z)
    assert not torch.allclose(by_result, model(ids))


@torch.no_grad()
def test_rope_rotated_queries_and_keys_give_the_scores():
    model = _model(positions="rope", kv_heads=2, norm="rmsnorm", bias=False)
    ids = torch.randint(0, 40, (2, 5))
    _, cache = run_with_cache(model, ids)
    b = "blocks.1.attn."
    cos, sin = rope_angles(8, torch.arange(5))
    rot_q = apply_rope(cache[b + "hook_q"].transpose(1, 2), cos, sin).transpose(1, 2)
    torch.testing.assert_close(cache[b + "hook_rot_q"], rot_q)
    assert cache[b + "hook_rot_k"].shape == (2, 5, 2, 8)
    q, k = cache[b + "hook_rot_q"].transpose(1, 2), cache[b + "hook_rot_k"].transpose(1, 2).repeat_interleave(2, 1)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(8)).masked_fill(~torch.ones(5, 5).tril().bool(), float("-inf"))
    torch.testing.assert_close(cache[b + "hook_attn_scores"], scores)
    # keys with no rotation: every query sees its keys as if at one position
    plain = run_with_hooks(model, ids, hooks=[(b + "hook_rot_k", lambda k, _: None)])
    assert torch.equal(plain, model(ids))
    flat = run_with_hooks(model, ids, hooks=[(b + "hook_rot_q", lambda _, __: cache[b + "hook_q"])])
    assert not torch.allclose(flat, model(ids))


def test_a_model_without_rope_has_no_rotated_points():
    names = run_with_cache(_model(), torch.zeros(1, 3, dtype=torch.long))[1]
    assert not any("rot_" in n for n in names) and "blocks.0.attn.hook_result" in names


@pytest.mark.parametrize("changes", [dict(positions="rope", kv_heads=2, norm="rmsnorm", bias=False),
                                     dict(norm_position="post"), dict(norm="batchnorm")])
@torch.no_grad()
def test_reading_the_new_points_leaves_the_logits_bit_for_bit(changes):
    model = _model(**changes)
    ids = torch.randint(0, 40, (2, 6))
    names = [n for n in run_with_cache(model, ids)[1] if n.endswith(("hook_scale", "hook_normalized", "hook_result",
                                                                      "hook_rot_q", "hook_rot_k"))]
    assert names and torch.equal(run_with_hooks(model, ids, hooks=[(n, lambda v, _: None) for n in names]), model(ids))
    if changes.get("norm") == "batchnorm":
        assert not any(n.endswith("hook_scale") for n in names)  # no per-token scale
