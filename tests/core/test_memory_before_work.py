"""Work sized by a field a person types (generation's max and beam, Speed's batch and lengths, a training run's
batch, a panel's private copy of the model) is refused in one line before anything is allocated when it needs
more memory than is free: on a CPU the kernel ends a process that touches more than there is, with no exception
to catch (the crawler's long tier lost its app so, 21 GB in, after a 5-digit batch in Speed's MHA/GQA panel).

Free memory is set by the test (1 GiB), so the rule is checked the same on any machine; the sizes that pass are
the app's defaults.
"""

from __future__ import annotations

import resource

import pytest
from memory_cap import GIB, address_space_capped

import tui_lab.devices
from tui_lab import load_preset
from tui_lab.bench.gqa_speed import check_kv_comparison, compare_kv_heads
from tui_lab.bench.kv_speed import compare_generation
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.loading import load_model
from tui_lab.mechanism.readouts import private_copy

TOY = dict(decoder_layers=2, d_model=64, heads=4, d_ff=128)


@pytest.fixture
def one_gib_free(monkeypatch):
    monkeypatch.setattr(tui_lab.devices, "free_memory", lambda device: GIB)


@pytest.fixture(scope="module")
def loaded():
    return load_model("config", load_preset("gpt2-toy", **TOY), device="cpu", seed=0)


def _refused(call, *words: str) -> str:
    """The one line a refused call raised; it names its sizes and what is free, and nothing grew meanwhile."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with address_space_capped(), pytest.raises(ValueError) as err:
        call()
    line = str(err.value)
    assert "\n" not in line and "is free on cpu" in line and "1.0 GiB" in line, line
    for word in words:
        assert word in line, line
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000, "it allocated before refusing"
    return line


class Codec:
    """No bos, no eos: every run makes the tokens asked for."""

    bos_id = eos_id = None


def test_generation_past_free_memory_is_refused_and_the_defaults_run(one_gib_free, loaded):
    model, codec, ids = loaded.model, Codec(), [5, 6, 7]
    _refused(lambda: complete(model, codec, ids, GenerationSettings(max_new_tokens=48, beam_size=999_999)),
             "48 new tokens x 999,999 beams", "smaller beam")
    _refused(lambda: complete(model, codec, ids, GenerationSettings(max_new_tokens=10 ** 9, temperature=0.0)),
             "1,000,000,000 new tokens")
    assert complete(model, codec, ids, GenerationSettings(max_new_tokens=48, temperature=0.0)).ids


def test_speeds_comparison_past_free_memory_is_refused_and_small_runs_run(one_gib_free, loaded):
    model = loaded.model
    _refused(lambda: compare_generation(model, 16, (64,), repeats=1, batch=999_999), "batch 999,999")
    assert compare_generation(model, 4, (4,), repeats=1).runs


def test_the_mha_gqa_panels_batch_past_free_memory_is_refused_before_a_model_is_built(one_gib_free, loaded):
    config = loaded.model.config
    for batch in (99_999, 999_999):  # the panel's field takes six digits
        _refused(lambda b=batch: check_kv_comparison(config, 64, 64, 3, b), f"batch {batch:,}", "lower batch")
        _refused(lambda b=batch: compare_kv_heads(config, batch=b), "3 models")
    check_kv_comparison(config, 64, 64, 3, 4)  # the panel's defaults
    assert compare_kv_heads(config, prompt_len=4, new_tokens=4, repeats=1).rows


def test_a_private_copy_that_cannot_fit_is_refused(monkeypatch, loaded):
    weights = sum(t.numel() * t.element_size() for t in loaded.model.parameters())
    monkeypatch.setattr(tui_lab.devices, "free_memory", lambda device: weights - 1)
    with pytest.raises(ValueError, match="private copy of the model.* needs about .* is free on cpu"):
        private_copy(loaded.model)
    monkeypatch.setattr(tui_lab.devices, "free_memory", lambda device: weights)
    assert private_copy(loaded.model) is not loaded.model
