"""Marian's sentencepiece tokenizer against transformers' MarianTokenizer, and translation against `generate`.

The folder is made here as the hub's opus-mt folders are laid out: a random MarianMTModel saved with
save_pretrained, source.spm trained on English, target.spm on German (sentencepiece's own trainer), and one
vocab.json for both: </s> 0, <unk> 1, the pieces of both models, <pad> (the decoder's start) last.
"""

from __future__ import annotations

import json
import sys

import pytest
from marian_fixtures import ENGLISH, GERMAN, SENTENCES, save_marian_folder, spm, trained_marian, transformers

from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.hf import load_hf


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    folder = trained_marian(tmp_path_factory)
    reference = transformers.MarianMTModel.from_pretrained(str(folder)).eval()
    return folder, reference, transformers.MarianTokenizer.from_pretrained(str(folder)), reference.config.vocab_size


def test_ids_equal_marian_tokenizers(marian):
    folder, _, theirs, size = marian
    _, ours = load_hf(folder)
    assert (ours.kind, ours.vocab_size, theirs.vocab_size) == ("sentencepiece", size, size)
    assert (ours.eos_id, ours.unk_id, ours.pad_id, ours.bos_id) == (0, 1, size - 1, size - 1)
    for text in SENTENCES:
        assert ours.encode(text) == theirs(text).input_ids, text
        assert ours.token_strings(ours.encode(text)) == theirs.convert_ids_to_tokens(theirs(text).input_ids)
    assert ours.encode(SENTENCES[0])[-1] == ours.eos_id  # Marian's sources end with </s>


def test_unknown_pieces_are_unk_and_named(marian):
    folder, _, theirs, _ = marian
    _, ours = load_hf(folder)
    assert ours.unknown(SENTENCES[0]) == []
    ids = ours.encode("Quokka? 7 films!")
    assert ours.unk_id in ids and ids == theirs("Quokka? 7 films!").input_ids
    assert set(ours.unknown("Quokka? 7 films!")) >= {"Q", "?", "7", "!"}


def test_decode_round_trips_and_equals_marian_tokenizers(marian):
    folder, _, theirs, _ = marian
    _, ours = load_hf(folder)
    for text in SENTENCES[:4]:
        ids = ours.encode(text)
        assert ours.decode(ids) == text
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True, use_source_tokenizer=False)
    german = [
        ours.vocab[p]
        for p in spm.SentencePieceProcessor(model_file=str(folder / "target.spm")).encode(GERMAN[0], out_type=str)
    ]
    assert ours.decode([ours.bos_id, *german, ours.eos_id]) == GERMAN[0]


def test_greedy_translation_equals_transformers_generate(marian):
    folder, reference, theirs, _ = marian
    model, tokenizer = load_hf(folder)
    agreed = 0
    for text in SENTENCES:
        src = theirs(text, return_tensors="pt").input_ids
        # greedy, the same length, the folder's generation_config.json obeyed by both (forced </s> at the limit)
        out = reference.generate(src, max_new_tokens=20, do_sample=False, num_beams=1)
        done = complete(model, tokenizer, tokenizer.encode(text), GenerationSettings(20, temperature=0.0))
        assert out[0, 0].item() == tokenizer.bos_id  # both start from decoder_start_token_id
        assert done.ids == out[0, 1:].tolist(), text
        assert tokenizer.decode(done.ids) == theirs.decode(out[0], skip_special_tokens=True, use_source_tokenizer=False)
        agreed += len(done.ids)
    assert agreed >= len(SENTENCES) * 5  # the comparison covered real translations, not one </s> each
    assert (
        tokenizer.decode(
            complete(model, tokenizer, tokenizer.encode(ENGLISH[0]), GenerationSettings(20, temperature=0.0)).ids
        )
        == GERMAN[0]
    )


def test_without_sentencepiece_the_model_loads_and_says_why(marian, monkeypatch):
    from tui_lab.loading import load_model

    folder = marian[0]
    monkeypatch.setitem(sys.modules, "sentencepiece", None)  # import sentencepiece now raises ImportError
    loaded = load_model("hf", str(folder))
    assert loaded.tokenizer is None and "needs the sentencepiece package" in loaded.label
    assert "\n" not in loaded.label


def test_incomplete_or_broken_tokenizer_files(tmp_path):
    from tui_lab.hf.load import open_hf

    save_marian_folder(tmp_path)
    (tmp_path / "target.spm").unlink()
    opened = open_hf(tmp_path)
    assert opened.tokenizer is None and opened.note == "its sentencepiece tokenizer is incomplete: no target.spm"
    (tmp_path / "target.spm").write_bytes(b"not a model")
    with pytest.raises(ValueError, match=r"^target\.spm: cannot read the sentencepiece model \(") as err:
        open_hf(tmp_path)
    assert "\n" not in str(err.value)
    (tmp_path / "target.spm").write_bytes((tmp_path / "source.spm").read_bytes())
    (tmp_path / "vocab.json").write_text(json.dumps({"</s>": 0, "<unk>": 2}))
    with pytest.raises(ValueError, match=r"^vocab\.json: its ids must be 0\.\.1, each once$"):
        open_hf(tmp_path)


def _cli(*args: str):
    import subprocess

    return subprocess.run([sys.executable, "-m", "tui_lab.cli", *args], capture_output=True, text=True)


def test_generate_translates_and_info_names_the_tokenizer(marian):
    folder, reference, theirs, size = marian
    out = _cli("generate", "--from-hf", str(folder), "--prompt", ENGLISH[0], "--temperature", "0", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    theirs_out = reference.generate(
        theirs(ENGLISH[0], return_tensors="pt").input_ids, max_new_tokens=64, do_sample=False, num_beams=1
    )
    assert result["ids"] == theirs_out[0, 1:].tolist() and result["completion"] == GERMAN[0]
    assert result["prompt_ids"] == theirs(ENGLISH[0]).input_ids and result["tokenizer"] == "sentencepiece"
    info = _cli("info", "--from-hf", str(folder), "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["tokenizer"] == f"sentencepiece (source.spm, target.spm, vocab.json), {size} tokens"
    shown = _cli("info", "--from-hf", str(folder))
    assert f"tokenizer: sentencepiece (source.spm, target.spm, vocab.json), {size} tokens" in shown.stdout


def test_a_typed_target_is_read_with_target_spm_without_eos(marian):
    from tui_lab.app import grids

    folder, _, theirs, _ = marian
    _, tokenizer = load_hf(folder)
    for text in GERMAN:
        labels = theirs(text_target=text).input_ids  # MarianTokenizer's target side: target.spm, then </s>
        assert tokenizer.encode_target(text) == labels[:-1] and labels[-1] == tokenizer.eos_id
    ids, shown = grids.tokenize(f"{grids.BOS_TEXT} {GERMAN[0]}", tokenizer.vocab_size, tokenizer, target=True)
    assert ids == [tokenizer.bos_id, *tokenizer.encode_target(GERMAN[0])] and shown[0] == "<pad>"
    assert "▁gesehen" in shown  # a target.spm piece source.spm does not have
