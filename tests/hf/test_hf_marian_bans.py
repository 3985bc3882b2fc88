"""A Marian folder's generation_config.json `bad_words_ids`, applied as transformers' generate applies them.

opus-mt folders ban `[[pad_token_id]]`: the decoder starts from pad and must never write it. The folders here
are test_hf_marian's trained one (it really translates) with a generation_config.json that bans tokens; one of
them also has +50 added to pad's final_logits_bias, so a decoder that ignored the ban would write nothing but
pad. Greedy output is compared with `MarianMTModel.generate`, which reads the same file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from marian_fixtures import ENGLISH, GERMAN, SENTENCES, banned_marian, trained_marian, transformers

from tui_lab.generation import generate, stream
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.hf.generation_config import Bans, read_bans
from tui_lab.hf.load import open_hf

pytest.importorskip("sentencepiece")




def theirs(folder: Path, text: str, max_new_tokens: int = 20) -> list[int]:
    """transformers' greedy translation (without its bos), its generation_config.json applied as written
    (forced_eos included: ours forces </s> at the last step too)."""
    tokenizer = transformers.MarianTokenizer.from_pretrained(str(folder))
    model = transformers.MarianMTModel.from_pretrained(str(folder)).eval()
    src = tokenizer(text, return_tensors="pt").input_ids
    out = model.generate(src, max_new_tokens=max_new_tokens, do_sample=False, num_beams=1)
    return out[0, 1:].tolist()


def ours(opened, text: str, max_new_tokens: int = 20, **settings) -> list[int]:
    s = GenerationSettings(max_new_tokens, temperature=settings.pop("temperature", 0.0), **settings)
    return complete(opened.model, opened.tokenizer, opened.tokenizer.encode(text), s).ids


# -- reading the file (no torch) ----------------------------------------------------------------------------


def _folder(tmp_path: Path, generation: dict | None = None, config: dict | None = None) -> tuple[Path, dict]:
    if generation is not None:
        (tmp_path / "generation_config.json").write_text(json.dumps(generation))
    return tmp_path, {"eos_token_id": 0, **(config or {})}


def test_single_token_bans_are_read_from_generation_config(tmp_path):
    folder, hf = _folder(tmp_path, {"bad_words_ids": [[77], [5], [77]], "eos_token_id": 0})
    bans = read_bans(folder, hf, vocab=78)
    assert (bans.ids, bans.source, bans.notes) == ((77, 5), "generation_config.json", ())
    assert bans.summary() == "bans 77, 5 (generation_config.json bad_words_ids)"


def test_eos_bans_are_left_out_with_a_note_and_longer_bans_go_to_the_rules(tmp_path):
    folder, hf = _folder(tmp_path, {"bad_words_ids": [[77], [3, 4], [0]], "eos_token_id": 0})
    bans = read_bans(folder, hf, vocab=78)
    assert bans.ids == (77,)  # [3, 4] is a sequence: read_generation's rules ban it with transformers' processor
    assert bans.notes == ("bad_words_ids [0] left out: it is eos, which transformers never bans either",)
    # generation_config.json's own eos list decides, as transformers reads it: without one, nothing is eos
    (folder / "generation_config.json").write_text(json.dumps({"bad_words_ids": [[0]]}))
    assert read_bans(folder, hf, vocab=78).ids == (0,)
    assert "\n" not in bans.summary() and bans.summary().startswith("bans 77 (")


def test_generation_config_wins_over_config_json_even_without_the_key(tmp_path):
    """transformers' from_pretrained: a generation_config.json without bad_words_ids bans nothing, whatever
    config.json says; without the file, config.json's legacy key is read (both checked against it below)."""
    folder, hf = _folder(tmp_path, {"eos_token_id": 0}, {"bad_words_ids": [[77]]})
    assert read_bans(folder, hf, vocab=78).ids == ()
    (folder / "generation_config.json").unlink()
    assert read_bans(folder, hf, vocab=78) == Bans((77,), "config.json")
    assert read_bans(folder, {"eos_token_id": 0}, vocab=78).summary() == ""


@pytest.mark.parametrize(
    "generation, message",
    [
        ({"bad_words_ids": [77]}, "generation_config.json: bad_words_ids must be a non-empty list of non-empty lists"),
        ({"bad_words_ids": []}, "generation_config.json: bad_words_ids must be a non-empty list of non-empty lists"),
        (
            {"bad_words_ids": [[78]]},
            "generation_config.json: bad_words_ids must hold token ids in 0..77 (the model's vocab), got 78",
        ),
        ({"bad_words_ids": [[-1]]}, "generation_config.json: bad_words_ids must hold token ids in 0..77"),
        ({"bad_words_ids": [[True]]}, "generation_config.json: bad_words_ids must hold token ids in 0..77"),
    ],
)
def test_a_malformed_list_is_one_line_naming_the_file_and_key(tmp_path, generation, message):
    folder, hf = _folder(tmp_path, generation)
    with pytest.raises(
        ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")
    ) as err:
        read_bans(folder, hf, vocab=78)
    assert "\n" not in str(err.value)


def test_an_unreadable_generation_config_is_one_line(tmp_path):
    (tmp_path / "generation_config.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"^generation_config\.json: cannot read it \(") as err:
        read_bans(tmp_path, {}, vocab=78)
    assert "\n" not in str(err.value)


# -- applied in the decoding loop, against transformers -----------------------------------------------------


@pytest.fixture(scope="module")
def pad_heavy(tmp_path_factory):
    """pad's logit +50 and banned, as opus-mt bans it: transformers must write the real translation."""
    folder = banned_marian(tmp_path_factory, "marian-pad-heavy", [[77]], pad_bias=50.0)
    return folder, open_hf(folder)


def test_the_pad_ban_gives_transformers_greedy_translation(pad_heavy):
    folder, opened = pad_heavy
    pad = opened.tokenizer.pad_id
    assert opened.model.banned_ids == (pad,) and opened.bans.source == "generation_config.json"
    agreed = 0
    for text in SENTENCES:
        expected = theirs(folder, text)
        assert ours(opened, text) == expected, text
        assert pad not in expected
        agreed += len(expected)
    assert agreed >= len(SENTENCES) * 5
    assert opened.tokenizer.decode(ours(opened, ENGLISH[0])) == GERMAN[0]
    # The ban is what made it: without it our loop writes pad at every step (the +50 bias).
    unbanned = generate(opened.model, _src(opened, ENGLISH[0]), 5, temperature=0.0, eos_id=0, bos_id=pad, banned_ids=())
    assert unbanned[0, 1:].tolist() == [pad] * 5


def test_sampling_beam_search_and_the_uncached_path_never_write_a_banned_id(pad_heavy):
    _, opened = pad_heavy
    pad = opened.tokenizer.pad_id
    for text in SENTENCES[:3]:
        for settings in (
            {"temperature": 1.5, "seed": 1},
            {"temperature": 2.0, "top_k": 5, "seed": 2},
            {"beam_size": 3},
            {"use_cache": False},
        ):
            assert pad not in ours(opened, text, **settings), (text, settings)
    steps = list(
        stream(opened.model, _src(opened, ENGLISH[0]), 8, temperature=1.0, eos_id=0, bos_id=pad, need_candidates=5)
    )
    assert all(pad not in step.candidates[0][0].tolist() for step in steps)  # no probability left for pad


def test_a_banned_word_changes_the_translation_as_it_does_in_transformers(tmp_path_factory):
    """Ban a German piece the translation writes (and pad): both decoders route around it the same way; a
    multi-token ban beside them is applied too, with transformers' processor."""
    trained = trained_marian(tmp_path_factory)
    plain, text = open_hf(trained), "we have seen the house"
    written = ours(plain, text)
    house, pad = written[2], plain.tokenizer.pad_id  # a piece in the middle of "wir haben das Haus gesehen"
    folder = banned_marian(tmp_path_factory, "marian-no-haus", [[pad], [house]])
    multi = banned_marian(tmp_path_factory, "marian-no-haus-multi", [[pad], [house]])
    config = json.loads((multi / "generation_config.json").read_text())
    (multi / "generation_config.json").write_text(json.dumps({**config, "bad_words_ids": [[pad], [house], [5, 6]]}))
    opened, opened_multi = open_hf(folder), open_hf(multi)
    assert opened_multi.model.banned_ids == (pad, house) and (5, 6) in opened_multi.generation.rules.bad_words_ids
    expected = theirs(folder, text)
    assert house not in expected and ours(opened, text) == expected and ours(opened_multi, text) == theirs(multi, text)
    for text in SENTENCES:
        assert ours(opened, text) == theirs(folder, text), text


def test_the_command_line_applies_the_folder_bans(pad_heavy):
    import subprocess

    folder, _ = pad_heavy
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_lab.cli",
            "generate",
            "--from-hf",
            str(folder),
            "--prompt",
            ENGLISH[1],
            "--temperature",
            "0",
            "--max-new-tokens",
            "20",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["ids"] == theirs(folder, ENGLISH[1]) and result["completion"] == GERMAN[1]


def _src(opened, text: str):
    import torch

    return torch.tensor([opened.tokenizer.encode(text)])
