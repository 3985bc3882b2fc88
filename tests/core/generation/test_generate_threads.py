"""The decode thread policy: the count comes back, the choice is measured once and kept per machine, and
cached == uncached greedy tokens hold whatever counts the two paths run on."""

from __future__ import annotations

import json

import pytest
import torch
from generate_support import ids, model_for, tiny

from tui_lab.bench.kv_speed import compare_generation
from tui_lab.generation import generate, threads
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.paths import cache_dir


class NoSpecials:
    """A codec with no bos/eos: every run makes exactly the tokens asked for."""

    bos_id = eos_id = None


@pytest.fixture(autouse=True)
def _fresh_choices(monkeypatch):
    """Each test starts with nothing chosen in this process and no override."""
    monkeypatch.setattr(threads, "_CHOSEN", {})
    monkeypatch.delenv("TUI_LAB_DECODE_THREADS", raising=False)


def test_torch_threads_restores_the_count_even_after_an_error():
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with threads.torch_threads(other) as inside:
        assert inside == torch.get_num_threads() == other
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), threads.torch_threads(other):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with threads.torch_threads(None) as inside:  # None: torch's count, untouched
        assert inside == before


def test_candidates_double_up_to_the_ceiling():
    assert threads.candidates(1) == [1]
    assert threads.candidates(2) == [1, 2]
    assert threads.candidates(6) == [1, 2, 4, 6]


def test_the_choice_is_measured_once_kept_in_the_cache_folder_and_read_back(monkeypatch):
    model = model_for(tiny())
    with threads.torch_threads(2):  # a ceiling of 2: two candidates to measure
        chosen = threads.decode_threads(model, use_cache=True)
        assert chosen in (1, 2) and torch.get_num_threads() == 2  # measuring left the count alone
        kept = json.loads((cache_dir() / threads.THREADS_FILE).read_text())
        key = threads.decode_key(model, True, 1)
        assert kept[key]["threads"] == chosen and set(kept[key]["trial_s"]) == {"1", "2"}
        assert "|cached" in key and "ceiling=2" in key and "d_model<=32" in key
        monkeypatch.setattr(threads, "_measure", lambda *a: pytest.fail("measured again"))
        assert threads.decode_threads(model, use_cache=True) == chosen  # this process remembers
        monkeypatch.setattr(threads, "_CHOSEN", {})
        assert threads.decode_threads(model, use_cache=True) == chosen  # a later launch reads the file


def test_one_thread_ceiling_and_the_override_skip_measuring(monkeypatch):
    model = model_for(tiny())
    monkeypatch.setattr(threads, "_measure", lambda *a: pytest.fail("measured"))
    with threads.torch_threads(1):
        assert threads.decode_threads(model, use_cache=False) == 1
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "3")
    assert threads.decode_threads(model, use_cache=False) == 3


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_cached_equals_uncached_when_the_paths_run_on_different_counts(monkeypatch, family):
    counts = {True: 1, False: 2}
    seen = {}

    def policy(model, use_cache, rows=1):
        seen[use_cache] = counts[use_cache]
        return counts[use_cache]

    monkeypatch.setattr("tui_lab.bench.kv_speed.decode_threads", policy)
    before = torch.get_num_threads()
    report = compare_generation(model_for(tiny(family)), prompt_len=5, new_tokens=(3, 12), repeats=1)
    assert all(run.identical for run in report.runs) and report.threads == {"cached": 1, "uncached": 2}
    assert seen == counts and torch.get_num_threads() == before


def test_complete_runs_on_the_policy_and_gives_the_count_back(monkeypatch):
    model = model_for(tiny(dropout=0.0))
    used = []
    real = threads.torch_threads

    def spy(count):
        used.append(count)
        return real(count)

    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "2")
    monkeypatch.setattr(threads, "torch_threads", spy)
    before = torch.get_num_threads()
    prompt = ids(1, 6)
    settings = [GenerationSettings(20, temperature=0.0, use_cache=cache) for cache in (True, False)]
    cached, uncached = (complete(model, NoSpecials(), prompt[0].tolist(), s) for s in settings)
    assert used == [2, 2] and torch.get_num_threads() == before
    expected = generate(model, prompt, 20, temperature=0.0)[0, 6:].tolist()
    assert cached.ids == uncached.ids == expected
