"""Inside one head: each step recomputed from the pass's q, k, v ends on the pass's own weights and output."""

from __future__ import annotations

import math

import pytest
import torch

from tui_lab.mechanism.inside_head import trace
from tui_lab.model import build_model
from tui_lab.presets import load_preset

CASES = {
    "gpt2 causal": ("gpt2-toy", {}),
    "llama gqa rope": ("llama-toy", {}),
    "alibi window": ("gpt2-toy", {"positions": "alibi", "attention_window": 3, "global_tokens": 1}),
    "bert self": ("bert-toy", {}),
    "2017 enc-dec": ("transformer-2017-toy", {}),
}


def _model(preset: str, overrides: dict):
    torch.manual_seed(0)
    config = load_preset(preset, d_model=32, heads=4, d_ff=64, **overrides)
    return build_model(config)


def _inputs(model):
    ids = [3, 9, 4, 17, 5, 8, 11]
    return ids, ([1, 6, 2, 7, 10] if model.config.family == "encoder-decoder" else None)


@pytest.mark.parametrize("case", list(CASES))
def test_each_kind_ends_on_the_grid_cell_and_the_head_output(case):
    model = _model(*CASES[case])
    src, tgt = _inputs(model)
    with torch.no_grad():
        grids = {(c.kind, c.layer): c.weights[0] for c in model.eval().run(
            torch.tensor([src]), None if tgt is None else torch.tensor([tgt]), need_weights=True).attentions}
    traced = trace(model, src, tgt)
    assert sorted(traced.kinds()) == sorted(grids)
    for kind, layer in traced.kinds():
        head, query = model.config.heads - 1, 3
        steps = traced.steps(kind, layer, head, query)
        # the recomputed softmax is the Attention view's grid row; the weighted sum is the head's hook_z
        assert steps.weights == pytest.approx(grids[(kind, layer)][head, query].tolist(), abs=1e-5)
        assert steps.out_error < 1e-5 and steps.weight_error < 1e-5
        assert steps.scaled == pytest.approx([d * steps.scale for d in steps.dots])
        assert steps.scale == pytest.approx(1 / math.sqrt(model.config.d_model // model.config.heads))
        blocked = [w for w, ok in zip(steps.weights, steps.allowed, strict=True) if not ok]
        assert all(w == 0 for w in blocked) and all(m == -math.inf for m, ok in
                                                     zip(steps.masked, steps.allowed, strict=True) if not ok)
        causal = kind == "decoder-self"
        assert any(not ok for ok in steps.allowed) == (causal or "window" in case)


def test_grouped_query_heads_name_their_shared_key_head():
    model = _model("llama-toy", {"kv_heads": 2})
    traced = trace(model, [5, 6, 7, 8], None)
    kv = [traced.steps("decoder-self", 0, h, 2).kv_head for h in range(4)]
    assert kv == [0, 0, 1, 1]
    assert traced.steps("decoder-self", 0, 3, 2).group == 2


def test_the_steps_use_the_rotated_keys_under_rope():
    """q·k from hook_q/hook_k as they are (before RoPE) would miss the weights; the rotation is applied."""
    model = _model("llama-toy", {})
    steps = trace(model, [5, 6, 7, 8, 9], None).steps("decoder-self", 1, 0, 4)
    assert steps.rope and steps.weight_error < 1e-5


def test_bad_choices_are_one_line_naming_the_field():
    traced = trace(_model("gpt2-toy", {}), [1, 2, 3], None)
    for args, field in [(("copy", 0, 0, 0), "kind"), (("decoder-self", 9, 0, 0), "layer"),
                        (("decoder-self", 0, 9, 0), "head"), (("decoder-self", 0, 0, 3), "query")]:
        with pytest.raises(ValueError, match=f"^{field}: "):
            traced.steps(*args)


def test_an_image_model_reads_its_patches():
    """A ViT's pass starts from pixels (1, C, I, I); its class token is query 0."""
    torch.manual_seed(0)
    model = build_model(load_preset("vit-toy")).eval()
    pixels = torch.rand(1, model.config.channels, model.config.image_size, model.config.image_size)
    with torch.no_grad():
        grid = model.run(pixels, need_weights=True).attentions[0].weights[0, 1, 0]
    steps = trace(model, pixels).steps("encoder-self", 0, 1, 0)
    assert steps.weights == pytest.approx(grid.tolist(), abs=1e-5) and steps.out_error < 1e-5
