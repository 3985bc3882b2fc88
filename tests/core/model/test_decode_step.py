"""The flat cached step (model/decode_step.py) is the module path op for op: greedy ids and logits agree with
the module path (TUI_LAB_MODULE_STEP=1) and with the uncached run, across the kinds it covers; kinds it does not
cover, hooks and asked-for weights keep the module path."""

import pytest
import torch

from tui_lab import build_model, load_preset
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.model.decode_step import DecodeStep, flat_step_fits
from tui_lab.model.hooks import attached
from tui_lab.model.masks import key_padding


def tiny(**changes) -> ModelConfig:
    base = dict(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=40, max_len=64,
                dropout=0.0, positions="rope", norm="rmsnorm", activation="swiglu", bias=False)
    return ModelConfig(**{**base, **changes})


KINDS = [
    dict(),  # Llama-like
    dict(kv_heads=2),  # grouped-query
    dict(attention_window=4, kv_heads=2),  # Mistral's rolling window
    dict(attention_window=3, global_tokens=1, positions="learned", norm="layernorm", activation="gelu", bias=True),
    dict(norm_position="post", positions="sinusoidal", norm="layernorm", activation="relu", bias=True),
    dict(ffn="moe", experts=4, experts_per_token=2),  # Mixtral: rows through their experts
    dict(family="encoder-decoder", encoder_layers=2, positions="sinusoidal", embedding_scale="sqrt_d_model"),
    dict(family="encoder-decoder", encoder_layers=1, kv_heads=2, norm_position="post", norm="layernorm"),
    dict(positions="alibi"),
    dict(positions="alibi", attention_window=3, kv_heads=1),
    dict(family="encoder-decoder", encoder_layers=1, positions="t5", attention_scale="none"),
]


def both_paths(monkeypatch, model, prompt, **kw) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    flat = generate(model, prompt, 20, temperature=0, **kw)
    monkeypatch.setenv("TUI_LAB_MODULE_STEP", "1")
    module = generate(model, prompt, 20, temperature=0, **kw)
    monkeypatch.delenv("TUI_LAB_MODULE_STEP")
    return flat, module, generate(model, prompt, 20, temperature=0, use_cache=False, **kw)


@pytest.mark.parametrize("rows", [1, 2])  # one row is carried as a vector, more as (N, E) rows
@pytest.mark.parametrize("changes", KINDS)
def test_flat_step_gives_the_module_paths_ids(monkeypatch, changes, rows):
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    assert flat_step_fits(model)
    prompt = torch.randint(40, (rows, 7))
    kw = {"bos_id": 1} if model.config.family == "encoder-decoder" else {}
    flat, module, uncached = both_paths(monkeypatch, model, prompt, **kw)
    assert torch.equal(flat, module) and torch.equal(flat, uncached)


@pytest.mark.parametrize("preset", ["gpt2-toy", "transformer-2017-toy"])
def test_toy_presets_step_logits_match_the_module_path(monkeypatch, preset):
    torch.manual_seed(0)
    model = build_model(load_preset(preset)).eval()
    ids = torch.randint(model.config.vocab, (1, 12))
    memory = model.encode(ids) if model.config.family == "encoder-decoder" else None
    rows = []
    for module_path in (False, True):
        monkeypatch.setenv("TUI_LAB_MODULE_STEP", "1" if module_path else "0")
        cache = model.new_cache(1, 12)
        with torch.inference_mode():
            rows.append(torch.cat([model.decode(ids[:, i:i + 1], memory, cache=cache) for i in range(12)], 1))
    torch.testing.assert_close(rows[0], rows[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("changes", KINDS)
def test_one_row_steps_as_that_row_of_a_batch(changes):
    """A batch of one (carried as a vector) and the same row inside a batch of three give the same logits."""
    torch.manual_seed(0)
    model = build_model(tiny(**changes)).eval()
    prompt = torch.randint(40, (3, 7))
    kw = {"bos_id": 1} if model.config.family == "encoder-decoder" else {}
    alone = generate(model, prompt[1:2], 12, temperature=0, **kw)
    batch = generate(model, prompt, 12, temperature=0, **kw)
    assert torch.equal(alone[0], batch[1])


def test_one_row_through_the_mixture_equals_the_module(monkeypatch):
    torch.manual_seed(0)
    model = build_model(tiny(ffn="moe", experts=4, experts_per_token=2)).eval()
    prompt = torch.randint(40, (1, 6))
    flat, module, uncached = both_paths(monkeypatch, model, prompt)
    assert torch.equal(flat, module) and torch.equal(flat, uncached)


def test_kinds_outside_the_plan_keep_the_module_path():
    assert not flat_step_fits(build_model(tiny(positions="relative")))
    assert not flat_step_fits(build_model(tiny(norm="batchnorm", positions="learned")))


def test_a_hooked_generation_still_sees_every_step():
    torch.manual_seed(0)
    model = build_model(tiny()).eval()
    seen = []
    with attached(model, [("blocks.0.hook_resid_pre", lambda x, _: seen.append(x.shape[1]))]):
        generate(model, torch.randint(40, (1, 5)), 6, temperature=0)
    assert seen == [5, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("kv_heads", [4, 2])
@pytest.mark.parametrize("source_len", [6, 40])  # 6 * 3 <= 32: the source is folded in; 40 * 3 > 32: it is not
def test_one_rows_cross_attention_equals_the_modules_over_a_padded_source(source_len, kv_heads):
    """A row's cross-attention with the source folded into its projections (or not, for a long source) is the
    module's, to float rounding, on peaked attention (large scores), and a padded source position gets no weight."""
    torch.manual_seed(0)
    model = build_model(tiny(family="encoder-decoder", encoder_layers=1, kv_heads=kv_heads, positions="sinusoidal",
                             norm="layernorm", activation="relu", bias=True)).eval()
    block = model.decoder[0]
    keep = torch.ones(1, source_len, dtype=torch.bool)
    keep[0, -2:] = False
    allowed = key_padding(keep)
    memory = 4 * torch.randn(1, source_len, 32)
    changed = memory.clone()
    changed[0, -2:] = 4 * torch.randn(2, 32)  # what a padded position holds must not matter
    step = DecodeStep(model).layers[0]
    with torch.inference_mode():
        for h in 4 * torch.randn(5, 32):
            module = block.cross(h[None, None], block.cross.memory_kv(memory), allowed)[0, 0]
            for source in (memory, changed):
                ours = step.cross_attention(h, block.cross.memory_kv(source), allowed)
                torch.testing.assert_close(ours, module, rtol=1e-5, atol=1e-5)
    assert (step.folded.rows is not None) == (source_len * 3 <= 32)
