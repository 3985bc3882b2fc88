"""The trained toys that ship in the package: presets by name, loadable, and trained as claimed.

The weights come from benchmarks/tools/make_shipped_toys.py; these tests read the files the package ships.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from tui_lab.analysis.params import count_params
from tui_lab.checkpoint import load_checkpoint
from tui_lab.data.corpus import builtin_corpus
from tui_lab.generation import generate
from tui_lab.model import build_model
from tui_lab.presets import list_presets, load_preset, weights_of
from tui_lab.shipped import shipped_checkpoint, shipped_meta, shipped_names
from tui_lab.toy_checks.checks import (
    PROMPTS,
    greedy_text,
    known_word_share,
    most_repeated_ngram,
    repeated_ngram_share,
    words,
)
from tui_lab.toy_checks.patterns import chance_previous_weight, previous_token_scores, reading_windows

NUMBERS, ENGLISH = "transformer-2017-toy-numbers-de", "gpt2-toy-english"
MAX_BYTES = 6_000_000  # "a few MB each"


@pytest.fixture(scope="module")
def numbers():
    return load_checkpoint(shipped_checkpoint(NUMBERS))


@pytest.fixture(scope="module")
def english():
    return load_checkpoint(shipped_checkpoint(ENGLISH))


def test_shipped_toys_are_presets_with_trained_weights() -> None:
    assert set(shipped_names()) == {NUMBERS, ENGLISH}
    assert {NUMBERS, ENGLISH} <= set(list_presets())
    for name, family, base in ((NUMBERS, "encoder-decoder", "transformer-2017-toy"),
                               (ENGLISH, "decoder-only", "gpt2-toy")):
        config = load_preset(name)
        assert (config.name, config.family, weights_of(name)) == (name, family, "trained")
        assert shipped_meta(name)["shipped"]["base_preset"] == base
        assert count_params(config).total > 0
    assert weights_of("gpt2-toy") == "random" and shipped_checkpoint("gpt2-toy") is None
    assert shipped_checkpoint("../presets") is None and shipped_checkpoint("") is None


def test_shipped_folders_are_small_and_hold_no_optimizer_state() -> None:
    for name in (NUMBERS, ENGLISH):
        folder = shipped_checkpoint(name)
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert sum(p.stat().st_size for p in files) < MAX_BYTES, name
        assert not (folder / "optimizer.safetensors").exists() and not (folder / "train_state.json").exists()
        assert all(p.suffix == ".json" or p.suffix == ".safetensors" for p in files), files  # no pickle


def test_the_preset_config_is_the_checkpoint_config(numbers, english) -> None:
    for name, ckpt in ((NUMBERS, numbers), (ENGLISH, english)):
        assert load_preset(name) == ckpt.config
        params = sum(p.numel() for p in ckpt.model.parameters())
        assert count_params(ckpt.config).total == params


def test_numbers_de_translates_342_greedily(numbers) -> None:
    """What `tui-lab generate --preset transformer-2017-toy-numbers-de --prompt ... --temperature 0` prints."""
    tok = numbers.tokenizer
    src = torch.tensor([tok.encode("three hundred forty two")])  # (1, S)
    out = generate(numbers.model, src, 12, temperature=0.0, bos_id=tok.bos_id, eos_id=tok.eos_id)
    assert tok.decode(out[0].tolist()) == "drei hundert zwei und vierzig"


def test_numbers_de_exact_match_on_held_out_numbers(numbers) -> None:
    from tui_lab.data.tasks import load_task
    from tui_lab.train.sources import Seq2SeqSource

    source = Seq2SeqSource(load_task("numbers-de"))
    assert source.exact_match(numbers.model, "cpu", limit=0) >= 0.98  # every held-out number, never trained on
    assert shipped_meta(NUMBERS)["shipped"]["measured"]["exact_match_held_out"] >= 0.98


def test_english_tokens_are_bpe_words_not_characters(english) -> None:
    tok = english.tokenizer
    assert tok.kind == "bpe"
    sentence = "In the morning, Anna walked to the market."
    assert len(tok.encode(sentence)) <= len(sentence.split()) + 2  # about a token a word, punctuation aside


@pytest.mark.parametrize("prompt", PROMPTS)
def test_english_greedy_text_is_words_and_does_not_loop(english, prompt: str) -> None:
    text = greedy_text(english.model, english.tokenizer, prompt)
    assert len(words(text)) >= 40, text
    assert known_word_share(text, set(words(builtin_corpus()))) >= 0.95, text
    assert repeated_ngram_share(text, n=6) < 0.2, text
    assert most_repeated_ngram(text, n=8) <= 2, text
    assert shipped_meta(ENGLISH)["shipped"]["measured"]["samples"][prompt] == text  # the recorded sample is real


def test_english_has_the_previous_token_head_its_meta_names(english) -> None:
    """The head the tour points at: its weight on position i-1 is the highest of all heads and well above
    a uniform head's (chance), which is where the same config with random weights sits."""
    named = shipped_meta(ENGLISH)["shipped"]["measured"]["previous_token_head"]
    windows = reading_windows(english.tokenizer)  # held-out text, (8, 128)
    scores = previous_token_scores(english.model, windows)  # (layers, heads)
    layer, head = named["layer"], named["head"]
    assert scores[layer, head] == scores.max()
    assert abs(float(scores[layer, head]) - named["score"]) < 1e-4
    chance = chance_previous_weight(windows.shape[1])
    assert scores[layer, head] > 2.5 * chance
    torch.manual_seed(0)
    untrained = previous_token_scores(build_model(english.config), windows)
    assert untrained.max() < 1.5 * chance  # so the pattern was learned, not built in


def test_checks_catch_a_loop_and_non_words() -> None:
    loop = "Anna walked to the market and the market was cold. " * 4
    assert repeated_ngram_share(loop) > 0.5 and most_repeated_ngram(loop) == 4
    three = '"I left a letter at the harbour," answered Mrs. Hale. ' * 3 + "Then they went home."
    assert most_repeated_ngram(three) == 3  # a loop that has only gone round three times
    assert repeated_ngram_share(builtin_corpus()[:600]) < 0.2 and most_repeated_ngram(builtin_corpus()[:600]) == 1
    assert known_word_share("Anna walked to the qzxv blorp", set(words(builtin_corpus()))) < 0.7


def test_listing_presets_does_not_import_torch() -> None:
    code = ("import sys; from tui_lab.presets import list_presets, load_preset; "
            f"load_preset({ENGLISH!r}); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_presets_marks_trained_weights() -> None:
    out = subprocess.run([sys.executable, "-m", "tui_lab.cli", "presets", "--json"], capture_output=True,
                         text=True, check=True)
    rows = {row["name"]: row for row in json.loads(out.stdout)["presets"]}
    assert rows[ENGLISH]["weights"] == "trained" and rows[ENGLISH]["family"] == "decoder-only"
    assert rows[NUMBERS]["weights"] == "trained" and rows["gpt2-small"]["weights"] == "random"
