"""Named hook points (tui_lab/model/hooks.py): every point is reached with its documented shape, reading
changes nothing, replacing changes what follows, the attention captures come through `hook_pattern`, and
hooks hold through cached generation (a rolling window cache included)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.model.hooks import attached, point_names


def tiny(**changes) -> ModelConfig:
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=64,
                dropout=0.0)
    return ModelConfig(**{**base, **changes})


def _model(config: ModelConfig, seed: int = 0):
    torch.manual_seed(seed)
    return build_model(config).eval()


def test_every_point_is_reached_in_order_with_its_shape():
    model = _model(tiny(kv_heads=2, positions="rope", norm="rmsnorm"))
    ids = torch.randint(0, 40, (3, 7))
    _, cache = run_with_cache(model, ids)
    assert list(cache) == point_names(model.config)  # the pass reaches every listed point, in that order
    n, length, e, h, k, d = 3, 7, 32, 4, 2, 8
    assert cache["blocks.0.hook_resid_pre"].shape == (n, length, e)
    assert cache["blocks.1.attn.hook_q"].shape == (n, length, h, d)
    assert cache["blocks.1.attn.hook_k"].shape == cache["blocks.1.attn.hook_v"].shape == (n, length, k, d)
    assert cache["blocks.1.attn.hook_pattern"].shape == (n, h, length, length)
    assert cache["blocks.1.attn.hook_z"].shape == (n, length, h, d)
    assert cache["ln_final.hook_normalized"].shape == (n, length, e)
    # the stream adds up: resid_post = resid_mid + mlp_out = resid_pre + attn_out + mlp_out (pre-LN)
    b = "blocks.0."
    torch.testing.assert_close(cache[b + "hook_resid_mid"], cache[b + "hook_resid_pre"] + cache[b + "hook_attn_out"])
    torch.testing.assert_close(cache[b + "hook_resid_post"], cache[b + "hook_resid_mid"] + cache[b + "hook_mlp_out"])
    torch.testing.assert_close(cache["blocks.1.hook_resid_pre"], cache["blocks.0.hook_resid_post"])


@pytest.mark.parametrize("activation", ["gelu_tanh", "swiglu"])
def test_embeddings_scores_and_mlp_points_agree_with_what_follows_them(activation):
    model = _model(tiny(activation=activation, positions="learned"))
    ids = torch.randint(0, 40, (2, 6))
    with torch.no_grad():
        _, cache = run_with_cache(model, ids)
        b = "blocks.1."
        torch.testing.assert_close(cache["hook_embed"] + cache["hook_pos_embed"], cache["blocks.0.hook_resid_pre"])
        scores, pattern = cache[b + "attn.hook_attn_scores"], cache[b + "attn.hook_pattern"]
        torch.testing.assert_close(torch.softmax(scores, -1), pattern)
        assert torch.isinf(scores[0, 0, 0, 1])  # causal: blocked keys at -inf
        ffn = model.decoder[1].ffn
        torch.testing.assert_close(ffn.down(cache[b + "mlp.hook_post"]), cache[b + "hook_mlp_out"])
        assert cache[b + "mlp.hook_pre"].shape == (2, 6, 48)
        if activation == "swiglu":
            torch.testing.assert_close(cache[b + "mlp.hook_post"],
                                       ffn.act(cache[b + "mlp.hook_pre"]) * cache[b + "mlp.hook_pre_linear"])


def test_an_encoder_decoder_names_its_two_stacks():
    config = tiny(family="encoder-decoder", encoder_layers=1, decoder_layers=1, positions="sinusoidal")
    model = _model(config)
    _, cache = run_with_cache(model, torch.randint(0, 40, (2, 5)), torch.randint(0, 40, (2, 4)))
    assert list(cache) == point_names(config)
    assert cache["decoder.0.cross_attn.hook_pattern"].shape == (2, 4, 4, 5)  # target x source


def test_an_encoder_only_stack_is_blocks_with_its_final_norm():
    config = tiny(family="encoder-only", encoder_layers=2, decoder_layers=0, positions="learned", head="mlm")
    model = _model(config)
    _, cache = run_with_cache(model, torch.randint(0, 40, (2, 5)))
    assert list(cache) == point_names(config) and list(cache)[-1] == "ln_final.hook_normalized"
    assert cache["blocks.1.attn.hook_pattern"].shape == (2, 4, 5, 5)


def test_reading_changes_nothing_and_replacing_changes_what_follows():
    model = _model(tiny())
    ids = torch.randint(0, 40, (2, 9))
    with torch.no_grad():
        plain = model(ids)
        names = point_names(model.config)
        fused = [n for n in names if not n.endswith(("hook_pattern", "hook_attn_scores"))]
        read = run_with_hooks(model, ids, hooks=[(n, lambda v, _: None) for n in fused])
        assert torch.equal(plain, read)
        # reading scores or pattern takes attention's explicit path (the fused kernel has neither): same maths
        read = run_with_hooks(model, ids, hooks=[(name, lambda v, _: None) for name in names])
        torch.testing.assert_close(plain, read, rtol=0, atol=1e-6)
        zeroed = run_with_hooks(model, ids, hooks=[("blocks.1.hook_resid_post", lambda v, _: torch.zeros_like(v))])
        expected = model.lm_head(model.decoder_norm(torch.zeros(2, 9, 32)))
    torch.testing.assert_close(zeroed, expected)
    assert model.hooks is None  # detached after the call


def test_attention_captures_come_through_hook_pattern_and_see_replacements():
    model = _model(tiny())
    ids = torch.randint(0, 40, (1, 6))
    with torch.no_grad():
        _, cache = run_with_cache(model, ids, names=lambda n: n.endswith("hook_pattern"))
        captures = model.run(ids, need_weights=True).attentions
        assert [(c.layer, c.kind) for c in captures] == [(0, "decoder-self"), (1, "decoder-self")]
        for c in captures:
            assert torch.equal(c.weights, cache[f"blocks.{c.layer}.attn.hook_pattern"])
        uniform = torch.tril(torch.ones(6, 6)) / torch.arange(1, 7)[:, None]  # each query averages its keys
        with attached(model, [("blocks.0.attn.hook_pattern", lambda w, _: uniform.expand_as(w))]):
            out = model.run(ids, need_weights=True)
    assert torch.equal(out.attentions[0].weights[0, 2], uniform.expand(4, 6, 6)[2])
    assert not torch.allclose(out.logits, model(ids))


@pytest.mark.parametrize("changes", [dict(), dict(attention_window=3, positions="rope", kv_heads=2)],
                         ids=["full", "rolling-window"])
def test_hooks_hold_through_cached_generation(changes):
    model = _model(tiny(**changes))
    prompt = torch.randint(0, 40, (1, 5))

    def ablate(z, _):
        z = z.clone()
        z[:, :, 1] = 0.0
        return z

    def copy_pattern(w, _):
        return w.clone()  # a replacement equal to the value: over a rolling cache it is mapped back to slots

    hooks = [("blocks.0.attn.hook_z", ablate), ("blocks.1.attn.hook_pattern", copy_pattern),
             ("blocks.1.attn.hook_attn_scores", copy_pattern)]
    plain = generate(model, prompt, 12, temperature=0.0)
    with attached(model, hooks):
        cached = generate(model, prompt, 12, temperature=0.0)
        uncached = generate(model, prompt, 12, temperature=0.0, use_cache=False)
    assert cached.tolist() == uncached.tolist()
    assert model.hooks is None and generate(model, prompt, 12, temperature=0.0).tolist() == plain.tolist()
    with attached(model, [("blocks.1.attn.hook_pattern", copy_pattern), ("blocks.0.attn.hook_attn_scores",
                                                                           copy_pattern)]):
        assert generate(model, prompt, 12, temperature=0.0).tolist() == plain.tolist()


def test_an_unknown_point_is_refused_in_one_line_and_hooks_leave_after_an_error():
    model = _model(tiny())
    with pytest.raises(ValueError, match="hook point 'blocks.2.hook_resid_pre' does not exist"):
        with attached(model, [("blocks.2.hook_resid_pre", lambda v, _: None)]):
            pass
    with pytest.raises(RuntimeError):
        with attached(model, [("blocks.0.hook_resid_pre", lambda v, _: None)]):
            raise RuntimeError("boom")
    assert model.hooks is None
